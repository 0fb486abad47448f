//! The catch-all route: every method and path goes to the upstream, and a Messages API stream
//! comes back through the stream repair.

use super::headers::{client_response_headers, upstream_request_headers};
use super::relay::{relay, RelayContext};
use super::rewrite::{plan_request, send_rewritten};
use super::App;
use crate::schema::{tool_list, ToolCatalog};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::TryStreamExt;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

pub async fn forward(State(app): State<Arc<App>>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, app.config.max_request_bytes).await {
        Ok(body) => body,
        Err(_) => {
            return api_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                &format!("toolmend: request body over {} bytes", app.config.max_request_bytes),
            )
        }
    };
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let url = format!("{}{}", app.config.upstream.trim_end_matches('/'), path_and_query);
    let is_messages = parts.method == Method::POST && parts.uri.path().ends_with("/v1/messages");
    let request_tools = if is_messages { serde_json::from_slice::<Value>(&body).ok() } else { None };
    let headers = upstream_request_headers(&parts.headers);
    let rewrite_started = Instant::now();
    let rewrite = if is_messages { plan_request(&app, &body) } else { None };
    let rewrite_time = rewrite_started.elapsed();

    let upstream = match &rewrite {
        Some(rewrite) => send_rewritten(&app, &parts.method, &url, &headers, rewrite, &body).await,
        None => send(&app, &parts.method, &url, headers, body.clone()).await.map(Upstream::Streaming),
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
    let tools = request_tools.as_ref().and_then(tool_list).filter(|_| is_sse && status.is_success());
    let response_headers = client_response_headers(upstream.headers(), tools.is_some());
    let body = match tools {
        Some(tools) => {
            let mut catalog = ToolCatalog::default();
            catalog.add_all(tools, Some(&app.schemas));
            let schemas: HashMap<String, Value> = tools
                .iter()
                .filter_map(|t| Some((t["name"].as_str()?.to_string(), t.get("input_schema")?.clone())))
                .collect();
            let request_id = upstream
                .headers()
                .get("request-id")
                .and_then(|v| v.to_str().ok())
                .map(String::from)
                .unwrap_or_else(|| app.next_request_id());
            let context = RelayContext { tools: Arc::new(catalog), schemas, request_id, started, rewrite_time };
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

/// An error in the Messages API's own shape, so SDKs report it as usual.
fn api_error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, axum::Json(body)).into_response()
}
