//! The sidecar's own endpoints.

use super::App;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

pub async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}))
}

pub async fn metrics(State(app): State<Arc<App>>) -> Response {
    let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    ([(header::CONTENT_TYPE, content_type)], app.metrics.render()).into_response()
}

#[derive(Deserialize)]
pub struct Since {
    since: Option<u64>,
}

/// `GET /events?since=ID`: the recent events after ID, oldest first.
pub async fn events(State(app): State<Arc<App>>, Query(query): Query<Since>) -> Response {
    let body = format!("{{\"events\":{}}}", app.events.since_json(query.since.unwrap_or(0)));
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `POST /events`: an event reported from outside (the PostToolBatch hook command), at most
/// `max_event_bytes` long. Only `application/json`: a web page cannot send that type to
/// another origin without a CORS preflight, which the sidecar never answers.
pub async fn report_event(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        let error = json!({"error": "expected Content-Type: application/json"});
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, Json(error)).into_response();
    }
    let limit = app.config.max_event_bytes;
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        app.metrics.count_event_dropped("post_too_large");
        let message = format!("event over max_event_bytes ({limit} bytes)");
        return (StatusCode::PAYLOAD_TOO_LARGE, Json(json!({"error": message}))).into_response();
    };
    let Ok(Value::Object(mut event)) = serde_json::from_slice::<Value>(&bytes) else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "expected a JSON object"}))).into_response();
    };
    let kind = event.get("kind").and_then(Value::as_str).unwrap_or("reported").to_string();
    for key in ["kind", "id", "time"] {
        event.remove(key);
    }
    // `--redact-inputs` holds for reported calls too.
    if app.config.redact_inputs {
        for field in ["raw", "input", "sent"] {
            if let Some(value) = event.get_mut(field) {
                *value = Value::Null;
            }
        }
    }
    let stored = app.record_event(&kind, Value::Object(event));
    (StatusCode::CREATED, Json(json!({"id": stored.id}))).into_response()
}
