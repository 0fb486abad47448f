//! The sidecar's own endpoints.

use super::App;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
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
/// `max_event_bytes` long.
pub async fn report_event(State(app): State<Arc<App>>, body: Body) -> Response {
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
    let stored = app.record_event(&kind, Value::Object(event));
    (StatusCode::CREATED, Json(json!({"id": stored.id}))).into_response()
}
