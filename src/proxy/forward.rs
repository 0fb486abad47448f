//! The catch-all route: every method and path goes to the upstream, and a Messages API stream
//! comes back through the stream repair.

use super::headers::{client_response_headers, upstream_request_headers};
use super::relay::{relay, RelayContext};
use super::rewrite::{plan_request, send_rewritten};
use super::tee::{tee, BodyInFlight, ClientBodyError};
use super::upstream_client::cut_of;
use super::upstream_io::Cut;
use super::whole_body::{read_whole, Unread};
use super::App;
use crate::schema::{request_tools_text, tool_list};
use crate::stream::messages::WireFormat;
use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::future::{self, Either};
use futures_util::FutureExt;
use futures_util::TryStreamExt;
use hyper::body::{Frame, SizeHint};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

pub async fn forward(State(app): State<Arc<App>>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let is_messages = WireFormat::of_request(parts.method.as_str(), parts.uri.path()).is_some();
    let rewrite_wanted = is_messages && (app.config.strict.is_enabled() || !app.examples.is_empty());
    let declared = declared_length(&parts.headers);
    if let Some(coding) = unsupported_transfer_coding(&parts.headers) {
        // Sent on, its coded bytes would reach the upstream as a plain body.
        let message = format!(
            "toolmend: the transfer coding '{coding}' is not supported; send the body chunked or with a Content-Length"
        );
        return api_error(StatusCode::NOT_IMPLEMENTED, "invalid_request_error", &message);
    }
    if declared.is_some_and(|length| length > app.config.max_request_bytes) {
        return too_large(&app);
    }
    // A body streams upstream as it arrives, but a rewrite (strict, examples) needs it whole.
    // What is held counts against the bound over all requests until this request is answered.
    let has_body = declared.is_some_and(|length| length > 0) || parts.headers.contains_key(header::TRANSFER_ENCODING);
    let mut held = app.request_memory.hold();
    let (body, received, in_flight) = match has_body && !rewrite_wanted {
        true => {
            let limit = app.config.max_request_bytes;
            let (streamed, received, in_flight) = tee(body, declared, limit, app.request_memory.hold());
            (RequestBody::Streamed(streamed, declared), received, Some(in_flight))
        }
        false => match read_whole(body, declared, app.config.max_request_bytes, &mut held).await {
            Ok(whole) => {
                let (sender, received) = oneshot::channel();
                let _ = sender.send(request_tools_text(&whole).map(|tools| whole.slice_ref(tools.as_bytes())));
                (RequestBody::Whole(whole), received, None)
            }
            Err(Unread::TooLarge) => return too_large(&app),
            Err(Unread::NoMemory) => return no_memory(&app),
            Err(Unread::Broken(error)) => return unreadable(&error),
        },
    };
    let url = match super::path::upstream_url(&app.config.upstream, &parts.uri) {
        Ok(url) => url,
        Err(refused) => return refused.into_response(),
    };
    let headers = upstream_request_headers(&parts.headers);
    let rewrite_started = Instant::now();
    let rewrite = match &body {
        RequestBody::Whole(whole) if rewrite_wanted => plan_request(&app, whole),
        _ => None,
    };
    let rewrite_time = rewrite_started.elapsed();
    // The rewritten body is held beside the original (sent again if the upstream rejects it).
    if rewrite.as_ref().is_some_and(|rewrite| !held.grow(rewrite.body.len())) {
        return no_memory(&app);
    }

    let upstream = async {
        match (&rewrite, body) {
            (Some(rewrite), RequestBody::Whole(whole)) => {
                send_rewritten(&app, &parts.method, &url, &headers, rewrite, &whole).await
            }
            (_, body) => send_body(&app, &parts.method, &url, headers.clone(), body).await.map(Upstream::Streaming),
        }
    };
    // The tools are learned while the upstream answers (the request is on its way first):
    // only the `tools` text is read, and a catalog seen before is one lookup.
    let learn = async {
        let tools = received.await.ok().flatten().filter(|_| is_messages)?;
        let catalog = app.schemas.catalog_for_text(&tools)?;
        Some((catalog, tools))
    };
    let mut learn = std::pin::pin!(learn);
    let (upstream, learned) = match future::select(std::pin::pin!(upstream), learn.as_mut()).await {
        Either::Left((upstream, _)) => (upstream, None),
        Either::Right((learned, upstream)) => (upstream.await, Some(learned)),
    };
    let upstream = match upstream {
        Ok(Upstream::Streaming(response)) => response,
        Ok(Upstream::Read(response)) => return response,
        Err(response) => return response,
    };
    let status = upstream.status();
    let is_sse = is_plain_event_stream(upstream.headers());
    // Only a stream is repaired, against the tools known when its head came: they are known
    // once the whole body went upstream. An upstream that answered before that may never read
    // the rest: its stream passes on unrepaired at once rather than wait on the body (attack
    // round 10, finding 6: the client got nothing until the upstream gave up).
    let learned = match learned {
        Some(learned) => learned,
        None if is_sse && status.is_success() => learn.as_mut().now_or_never().flatten(),
        None => None,
    };
    let exchange = Exchange { cut: cut_of(&upstream), body: in_flight };
    let learned = learned.filter(|_| is_sse && status.is_success());
    let response_headers = client_response_headers(upstream.headers(), learned.is_some());
    let body = match learned {
        Some((catalog, tools)) => {
            let schemas = if app.capture.is_some() { capture_schemas(&tools) } else { HashMap::new() };
            let request_id = upstream
                .headers()
                .get("request-id")
                .and_then(|v| v.to_str().ok())
                .map(String::from)
                .unwrap_or_else(|| app.next_request_id());
            let context = RelayContext { tools: catalog, schemas, request_id, started, rewrite_time };
            relay(app.clone(), upstream, context)
        }
        None => {
            app.metrics.overhead.observe(rewrite_time.as_secs_f64());
            app.metrics.request_duration.observe(started.elapsed().as_secs_f64());
            Body::from_stream(upstream.bytes_stream().map_err(std::io::Error::other))
        }
    };
    let mut response = Response::new(Body::new(WithExchange { body, _exchange: exchange }));
    *response.status_mut() = status;
    *response.headers_mut() = response_headers;
    response
}

/// Whether a response is an SSE stream whose frames can be read as they come: one with a
/// `content-encoding` (gzip, say) passes through unread, like any other body (attack round 21).
fn is_plain_event_stream(headers: &HeaderMap) -> bool {
    // Every coding on every line must be `identity` (`identity` then `gzip` on two lines is gzip).
    let plain = headers.get_all(header::CONTENT_ENCODING).iter().all(|line| {
        line.to_str().is_ok_and(|codings| codings.split(',').all(|c| c.trim().eq_ignore_ascii_case("identity")))
    });
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|value: &HeaderValue| value.to_str().ok());
    plain && content_type.is_some_and(is_event_stream)
}

/// Whether a `content-type` names an SSE stream: media types are case-blind
/// (`TEXT/EVENT-STREAM; charset=utf-8` too), and end at a `;` or space.
fn is_event_stream(content_type: &str) -> bool {
    const SSE: &str = "text/event-stream";
    let Some(kind) = content_type.get(..SSE.len()) else { return false };
    let rest = &content_type[SSE.len()..];
    kind.eq_ignore_ascii_case(SSE) && (rest.is_empty() || rest.starts_with([';', ' ', '\t']))
}

/// One request's exchange with the upstream, until its response is done (read to its end, or
/// the client left).
struct Exchange {
    /// The connection the response came on.
    cut: Option<Cut>,
    /// The streamed request body while the upstream connection still has it to send.
    body: Option<BodyInFlight>,
}

impl Drop for Exchange {
    /// A body still to be sent when the exchange is over is not waited on: the upstream that
    /// answered without reading it may keep the connection for ever, and the body the request
    /// memory it holds (attack round 10, finding 6).
    fn drop(&mut self) {
        if let (Some(cut), Some(body)) = (&self.cut, &self.body) {
            if body.is_in_flight() {
                cut.cut();
            }
        }
    }
}

/// A response body that ends its [`Exchange`] when dropped.
struct WithExchange {
    body: Body,
    _exchange: Exchange,
}

impl HttpBody for WithExchange {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The request body as it goes upstream.
enum RequestBody {
    /// Read to its end first.
    Whole(Bytes),
    /// Sent as it arrives, with its declared length (chunked when it has none).
    Streamed(reqwest::Body, Option<usize>),
}

/// A transfer coding of the request other than `chunked` (which the server decodes).
fn unsupported_transfer_coding(headers: &HeaderMap) -> Option<String> {
    let codings = headers.get_all(header::TRANSFER_ENCODING).iter();
    let mut codings = codings.flat_map(|value| value.to_str().unwrap_or("?").split(',').map(str::trim));
    codings.find(|coding| !coding.eq_ignore_ascii_case("chunked")).map(String::from)
}

fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// The client body's error among `error`'s causes, when the upstream request failed for it.
fn client_body_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a ClientBodyError> {
    let mut source = Some(error);
    while let Some(error) = source {
        if let Some(found) = error.downcast_ref::<ClientBodyError>() {
            return Some(found);
        }
        source = error.source();
    }
    None
}

/// `error` and its causes, each once (the message of one often repeats its cause's).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text = format!("{text}: {message}");
        }
        source = cause.source();
    }
    text
}

/// A body that broke off or whose framing is wrong (a bad chunk size): a 400, not a 413.
fn unreadable(error: &dyn std::fmt::Display) -> Response {
    let message = format!("toolmend: the request body could not be read: {error}");
    api_error(StatusCode::BAD_REQUEST, "invalid_request_error", &message)
}

fn too_large(app: &App) -> Response {
    api_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request_too_large",
        &format!("toolmend: request body over {} bytes", app.config.max_request_bytes),
    )
}

/// The bodies held at once reached `request_memory_bytes`: a 503, which the SDKs retry.
fn no_memory(app: &App) -> Response {
    tracing::warn!(bound = app.request_memory.total(), "request refused: request_memory_bytes reached");
    let message = format!(
        "toolmend: the request bodies held at once reached {} bytes (request_memory_bytes); try again",
        app.request_memory.total()
    );
    let mut response = api_error(StatusCode::SERVICE_UNAVAILABLE, "api_error", &message);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The request's raw schemas by tool name (from its `tools` text), for the capture file.
fn capture_schemas(tools: &[u8]) -> HashMap<String, Value> {
    let tools: Value = serde_json::from_slice(tools).unwrap_or_default();
    tool_list(&tools)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t.get("input_schema")?.clone())))
        .collect()
}

pub(super) enum Upstream {
    /// A response whose body is still to be streamed.
    Streaming(reqwest::Response),
    /// A response already read and answered (an error that did not blame the rewrite).
    Read(Response),
}

pub(super) async fn send(
    app: &App,
    method: &Method,
    url: &str,
    headers: HeaderMap,
    body: Bytes,
) -> Result<reqwest::Response, Response> {
    send_body(app, method, url, headers, RequestBody::Whole(body)).await
}

async fn send_body(
    app: &App,
    method: &Method,
    url: &str,
    mut headers: HeaderMap,
    body: RequestBody,
) -> Result<reqwest::Response, Response> {
    let body = match body {
        RequestBody::Whole(whole) => reqwest::Body::from(whole),
        RequestBody::Streamed(streamed, length) => {
            // The declared length, so the upstream sees the body framed as the client sent it.
            if let Some(length) = length {
                headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
            }
            streamed
        }
    };
    match super::workers::client(app).send(method, url, headers, body).await {
        Ok(response) => {
            app.metrics.count_upstream(response.status().as_str());
            Ok(response)
        }
        Err(error) => match client_body_error(&error) {
            // The client's body ended it, not the upstream.
            Some(ClientBodyError::OverLimit) => Err(too_large(app)),
            Some(ClientBodyError::Broken(broken)) => Err(unreadable(broken)),
            None => {
                app.metrics.count_upstream("error");
                let reason = causes(&error);
                tracing::warn!(error = %reason, "upstream request failed");
                app.record_event("upstream_error", json!({"reason": reason}));
                Err(api_error(StatusCode::BAD_GATEWAY, "api_error", "toolmend: the upstream could not be reached"))
            }
        },
    }
}

/// An error in the Messages API's own shape, so SDKs report it as usual.
fn api_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::{is_event_stream, is_plain_event_stream};
    use axum::http::{HeaderMap, HeaderName, HeaderValue};

    #[test]
    fn an_event_stream_is_named_in_any_case() {
        for kind in ["text/event-stream", "TEXT/EVENT-STREAM", "Text/Event-Stream; charset=utf-8"] {
            assert!(is_event_stream(kind), "{kind}");
        }
        for kind in ["application/json", "text/event", "", "text/plain; x=text/event-stream", "text/event-streamx"] {
            assert!(!is_event_stream(kind), "{kind}");
        }
    }

    #[test]
    fn an_encoded_event_stream_is_not_read() {
        let headers = |pairs: &[(&'static str, &'static str)]| -> HeaderMap {
            pairs.iter().map(|(name, value)| (HeaderName::from_static(name), HeaderValue::from_static(value))).collect()
        };
        assert!(is_plain_event_stream(&headers(&[("content-type", "text/event-stream")])));
        assert!(is_plain_event_stream(&headers(&[
            ("content-type", "text/event-stream"),
            ("content-encoding", "Identity")
        ])));
        for encoding in ["gzip", "br", "identity, gzip"] {
            let headers = headers(&[("content-type", "text/event-stream"), ("content-encoding", encoding)]);
            assert!(!is_plain_event_stream(&headers), "{encoding}");
        }
        assert!(!is_plain_event_stream(&headers(&[("content-type", "application/json")])));
        let two_lines = headers(&[
            ("content-type", "text/event-stream"),
            ("content-encoding", "identity"),
            ("content-encoding", "gzip"),
        ]);
        assert!(!is_plain_event_stream(&two_lines), "every line counts");
    }
}
