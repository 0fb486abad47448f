//! The live page at `GET /`: HTML, CSS and JavaScript compiled into the binary (no CDN, no build
//! step). It polls `/events` and `/metrics`; the Content-Security-Policy lets it load only its
//! own files and talk only to the sidecar, so even a slip in escaping could not run a script.
//! Every other method on `/` (the CLI's `HEAD /`) still goes to the upstream.

use super::{forward, App};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::sync::Arc;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/page.js");
const STYLE: &str = include_str!("page/page.css");

const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                      img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", INDEX)).head(forward::forward).fallback(forward::forward))
        .route("/page.js", get(|| asset("text/javascript; charset=utf-8", SCRIPT)))
        .route("/page.css", get(|| asset("text/css; charset=utf-8", STYLE)))
}

async fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
}
