//! The catch-all route: every method and path goes to the upstream, and a Messages API stream
//! comes back through the stream repair.

use super::headers::{client_response_headers, upstream_request_headers};
use super::relay::{relay, RelayContext};
use super::strict::{blames_strict_schema, plan, StrictPlan};
use super::tee::tee;
use super::App;
use crate::schema::{request_tools_text, tool_list};
use crate::stream::messages::WireFormat;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::future::{self, Either};
use futures_util::TryStreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

pub async fn forward(State(app): State<Arc<App>>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let is_messages = WireFormat::of_request(parts.method.as_str(), parts.uri.path()).is_some();
    let strict_wanted = is_messages && app.config.strict.is_enabled();
    let declared = declared_length(&parts.headers);
    if declared.is_some_and(|length| length > app.config.max_request_bytes) {
        return too_large(&app);
    }
    // A body of known length streams upstream as it arrives; strict injection rewrites the body
    // and needs it whole, and so does a body of unknown length (to bound it).
    let (body, received) = match declared.filter(|_| !strict_wanted) {
        Some(length) => {
            let (streamed, received) = tee(body, length);
            (RequestBody::Streamed(streamed, length), received)
        }
        None => match axum::body::to_bytes(body, app.config.max_request_bytes).await {
            Ok(whole) => {
                let (sender, received) = oneshot::channel();
                let _ = sender.send(whole.clone());
                (RequestBody::Whole(whole), received)
            }
            Err(_) => return too_large(&app),
        },
    };
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let url = format!("{}{}", app.config.upstream.trim_end_matches('/'), path_and_query);
    let headers = upstream_request_headers(&parts.headers);
    let rewrite_started = Instant::now();
    let strict = match &body {
        RequestBody::Whole(whole) if strict_wanted => strict_plan(&app, whole),
        _ => None,
    };
    let rewrite_time = rewrite_started.elapsed();

    let upstream = async {
        match (&strict, body) {
            (Some(plan), RequestBody::Whole(whole)) => {
                send_strict(&app, &parts.method, &url, &headers, plan, &whole).await
            }
            (_, body) => send(&app, &parts.method, &url, headers.clone(), body).await.map(Upstream::Streaming),
        }
    };
    // The tools are learned while the upstream answers (the request is on its way first):
    // only the `tools` text is read, and a catalog seen before is one lookup.
    let learn = async {
        let body = received.await.ok()?;
        let tools = if is_messages { request_tools_text(&body) } else { None };
        Some((tools.and_then(|tools| app.schemas.catalog_for_text(tools))?, body))
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
    let is_sse = upstream
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    // Only a stream is repaired; the body is all in by now unless the upstream answered early.
    let learned = match learned {
        Some(learned) => learned,
        None if is_sse && status.is_success() => learn.await,
        None => None,
    };
    let learned = learned.filter(|_| is_sse && status.is_success());
    let response_headers = client_response_headers(upstream.headers(), learned.is_some());
    let body = match learned {
        Some((catalog, body)) => {
            let schemas = if app.capture.is_some() { capture_schemas(&body) } else { HashMap::new() };
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
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = response_headers;
    response
}

/// The request body as it goes upstream.
enum RequestBody {
    /// Read to its end first.
    Whole(Bytes),
    /// Sent as it arrives, with its declared length.
    Streamed(reqwest::Body, usize),
}

fn declared_length(headers: &HeaderMap) -> Option<usize> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

fn too_large(app: &App) -> Response {
    api_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "request_too_large",
        &format!("toolmend: request body over {} bytes", app.config.max_request_bytes),
    )
}

/// The request's raw schemas by tool name, for the capture file.
fn capture_schemas(body: &[u8]) -> HashMap<String, Value> {
    let tools: Value = request_tools_text(body).and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default();
    tool_list(&tools)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t.get("input_schema")?.clone())))
        .collect()
}

enum Upstream {
    /// A response whose body is still to be streamed.
    Streaming(reqwest::Response),
    /// A response already read and answered (an error that was not the strict schemas').
    Read(Response),
}

async fn send(
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
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
            streamed
        }
    };
    match app.client.request(method.clone(), url).headers(headers).body(body).send().await {
        Ok(response) => {
            app.metrics.count_upstream(response.status().as_str());
            Ok(response)
        }
        Err(error) => {
            app.metrics.count_upstream("error");
            let reason = error.without_url().to_string();
            tracing::warn!(error = %reason, "upstream request failed");
            app.record_event("upstream_error", json!({"reason": reason}));
            Err(api_error(StatusCode::BAD_GATEWAY, "api_error", "toolmend: the upstream could not be reached"))
        }
    }
}

/// The plan for this request, unless its tool set was rejected before.
fn strict_plan(app: &App, body: &[u8]) -> Option<StrictPlan> {
    let plan = plan(body, &app.config.strict)?;
    if app.strict_set_rejected(plan.set_key) {
        for name in &plan.injected {
            app.metrics.count_strict("not_injected_after_rejection");
            tracing::debug!(tool = %name, "strict injection skipped: the API rejected this tool set before");
        }
        return None;
    }
    for _ in &plan.injected {
        app.metrics.count_strict("injected");
    }
    for _ in &plan.skipped {
        app.metrics.count_strict("skipped");
    }
    if app.first_sight_of_strict_set(plan.set_key) {
        if !plan.injected.is_empty() {
            app.record_event("strict_injected", json!({"tools": plan.injected}));
        }
        for (tool, reason) in &plan.skipped {
            app.record_event("strict_skipped", json!({"tool": tool, "reason": reason}));
        }
    }
    Some(plan)
}

/// Sends the injected request; a 400 that blames the strict schemas re-issues the original
/// request once, byte-identical, and the tool set is not injected again.
async fn send_strict(
    app: &App,
    method: &Method,
    url: &str,
    headers: &HeaderMap,
    plan: &StrictPlan,
    original: &Bytes,
) -> Result<Upstream, Response> {
    if plan.injected.is_empty() {
        return send(app, method, url, headers.clone(), RequestBody::Whole(original.clone()))
            .await
            .map(Upstream::Streaming);
    }
    let mut injected_headers = headers.clone();
    if let Some(beta) = &app.config.strict.beta {
        let value = match headers.get("anthropic-beta").and_then(|v| v.to_str().ok()) {
            Some(existing) => format!("{existing},{beta}"),
            None => beta.clone(),
        };
        if let Ok(value) = HeaderValue::from_str(&value) {
            injected_headers.insert("anthropic-beta", value);
        }
    }
    let response = send(app, method, url, injected_headers, RequestBody::Whole(Bytes::from(plan.body.clone()))).await?;
    if response.status() != StatusCode::BAD_REQUEST {
        return Ok(Upstream::Streaming(response));
    }
    let status = response.status();
    let response_headers = client_response_headers(response.headers(), false);
    let error_body = response.bytes().await.unwrap_or_default();
    if !blames_strict_schema(&error_body) {
        let mut answer = Response::new(Body::from(error_body));
        *answer.status_mut() = status;
        *answer.headers_mut() = response_headers;
        return Ok(Upstream::Read(answer));
    }
    app.reject_strict_set(plan.set_key);
    for _ in &plan.injected {
        app.metrics.count_strict("rejected");
    }
    let reason = String::from_utf8_lossy(&error_body).chars().take(500).collect::<String>();
    tracing::warn!(tools = ?plan.injected, "the API rejected the strict schemas; re-issuing without injection");
    app.record_event("strict_rejected", json!({"tools": plan.injected, "reason": reason}));
    send(app, method, url, headers.clone(), RequestBody::Whole(original.clone())).await.map(Upstream::Streaming)
}

/// An error in the Messages API's own shape, so SDKs report it as usual.
fn api_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, axum::Json(body)).into_response()
}
