//! The upstream URL of a request: the configured upstream (with its path prefix) joined with the
//! request's path, normalized first so that `..`, `.` and their percent-encoded forms cannot
//! climb out of the prefix (`/gateway/team-a` + `/../../admin` must not reach `/admin`).

use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A request path that would leave the upstream's prefix, or hides a separator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("toolmend: the request path {path} {why}")]
pub struct PathRefused {
    path: String,
    why: &'static str,
}

impl IntoResponse for PathRefused {
    fn into_response(self) -> Response {
        let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": self.to_string()}});
        (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
    }
}

/// `upstream` + the request's normalized path + its query, as sent upstream.
pub fn upstream_url(upstream: &str, uri: &Uri) -> Result<String, PathRefused> {
    let path = normalize(uri.path())?;
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    Ok(format!("{}{path}{query}", upstream.trim_end_matches('/')))
}

/// Removes `.` segments and resolves `..` ones (also `%2e`, any case); refuses a path that
/// climbs above its root or carries an encoded `/` or `\` an upstream might decode.
pub fn normalize(path: &str) -> Result<String, PathRefused> {
    let refuse = |why| PathRefused { path: path.to_string(), why };
    let mut kept: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let last = segments.len() - 1;
    for (index, segment) in segments.iter().enumerate() {
        let lower = segment.to_ascii_lowercase();
        if lower.contains("%2f") || lower.contains("%5c") || segment.contains('\\') {
            return Err(refuse("holds an encoded path separator"));
        }
        match lower.replace("%2e", ".").as_str() {
            "." => {}
            ".." => {
                if kept.pop().is_none() {
                    return Err(refuse("climbs above the upstream's path prefix"));
                }
            }
            _ => {
                kept.push(segment);
                continue;
            }
        }
        // A dot segment at the end leaves a directory path: keep its trailing slash.
        if index == last {
            kept.push("");
        }
    }
    Ok(format!("/{}", kept.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_never_leave_the_prefix() {
        let cases = [
            ("/v1/messages", Some("/v1/messages")),
            ("/", Some("/")),
            ("/v1/models/", Some("/v1/models/")),
            ("/v1/./messages", Some("/v1/messages")),
            ("/v1/x/../messages", Some("/v1/messages")),
            ("/v1/%2E/messages", Some("/v1/messages")),
            ("/v1/x/%2e%2E/messages", Some("/v1/messages")),
            ("/v1/x/.%2e/", Some("/v1/")),
            ("/v1/..", Some("/")),
            ("/a..b/...", Some("/a..b/...")),
            ("/../../admin/keys", None),
            ("/%2e%2e/admin", None),
            ("/v1/%2E%2e/../admin", None),
            ("/..%2f..%2fadmin", None),
            ("/v1/a%5c..", None),
        ];
        for (path, expected) in cases {
            assert_eq!(normalize(path).ok().as_deref(), expected, "{path}");
        }
    }

    #[test]
    fn the_prefix_and_query_are_kept() {
        let uri: Uri = "/v1/x/../messages?beta=true".parse().unwrap();
        assert_eq!(
            upstream_url("https://gw.example/gateway/team-a/", &uri).unwrap(),
            "https://gw.example/gateway/team-a/v1/messages?beta=true"
        );
        let uri: Uri = "/../../admin/keys".parse().unwrap();
        assert!(upstream_url("https://gw.example/gateway/team-a", &uri).is_err());
    }
}
