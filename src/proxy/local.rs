//! The sidecar's own endpoints.

use super::App;
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
pub async fn events(State(app): State<Arc<App>>, Query(query): Query<Since>) -> Json<Value> {
    Json(json!({"events": app.events.since(query.since.unwrap_or(0))}))
}

/// `POST /events`: an event reported from outside (the PostToolBatch hook command).
pub async fn report_event(
    State(app): State<Arc<App>>,
    body: Result<Json<Value>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Ok(Json(mut event)) = body else {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "expected a JSON object"}))).into_response();
    };
    if !event.is_object() {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "expected a JSON object"}))).into_response();
    }
    let kind = event["kind"].as_str().unwrap_or("reported").to_string();
    if let Some(map) = event.as_object_mut() {
        map.remove("kind");
        map.remove("id");
        map.remove("time");
        // `--redact-inputs` holds for reported calls too.
        if app.config.redact_inputs {
            for field in ["raw", "input", "sent"] {
                if let Some(value) = map.get_mut(field) {
                    *value = Value::Null;
                }
            }
        }
    }
    let stored = app.record_event(&kind, event);
    (StatusCode::CREATED, Json(json!({"id": stored.id}))).into_response()
}
