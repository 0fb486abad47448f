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
/// climbs above its root, carries an encoded `/` or `\` an upstream might decode, or has a
/// segment other servers read as a dot segment: one with a `;` parameter (`..;`, which Java
/// servers strip before resolving dots), encoded twice (`%252e%252e`, decoded twice by some), or
/// followed by a NUL or blanks (`..%00`, `%2e%2e%20`), and a `%u` escape or an escape that
/// decodes to bytes that are not UTF-8 (`%u002e`, overlong `%c0%ae`).
pub fn normalize(path: &str) -> Result<String, PathRefused> {
    let refuse = |why| PathRefused { path: path.to_string(), why };
    let mut kept: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let last = segments.len() - 1;
    for (index, segment) in segments.iter().enumerate() {
        let lower = segment.to_ascii_lowercase();
        let decoded = decode_fully(segment.as_bytes());
        if lower.contains("%2f") || lower.contains("%5c") || decoded.iter().any(|&b| b == b'/' || b == b'\\') {
            return Err(refuse("holds an encoded path separator"));
        }
        // Spellings of `.` that some servers decode and others pass on: IIS's `%u002e`, and
        // overlong UTF-8 (`%c0%ae`), which is no UTF-8 at all.
        if has_u_escape(&lower) || std::str::from_utf8(&decoded).is_err() {
            return Err(refuse("has a `%u` escape or bytes that are not UTF-8 (spellings some servers read as `.`)"));
        }
        let once = lower.replace("%2e", ".");
        // Some servers also cut a segment at a NUL or trim its trailing blanks.
        let dot_part = decoded.split(|&b| b == b';' || b == 0).next().unwrap_or_default();
        let dot_part = dot_part.trim_ascii_end();
        if !matches!(once.as_str(), "." | "..") && matches!(dot_part, b"." | b"..") {
            return Err(refuse(
                "has a segment other servers may read as `..` or `.` (a `;` parameter or a second encoding)",
            ));
        }
        match once.as_str() {
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

/// Whether `segment` (lower case) holds a `%uXXXX` escape.
fn has_u_escape(segment: &str) -> bool {
    segment
        .match_indices("%u")
        .any(|(at, _)| segment.as_bytes().get(at + 2..at + 6).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)))
}

/// `bytes` percent-decoded until decoding changes nothing (`%252e` → `%2e` → `.`).
fn decode_fully(bytes: &[u8]) -> Vec<u8> {
    let mut current = bytes.to_vec();
    loop {
        let next = decode_once(&current);
        if next == current {
            return current;
        }
        current = next;
    }
}

fn decode_once(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = match bytes.get(index..index + 3) {
            Some([b'%', high, low]) => hex(*high).zip(hex(*low)).map(|(high, low)| high << 4 | low),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    out
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
            ("/v1/a;b/x.;y", Some("/v1/a;b/x.;y")),
            ("/v1/%2e%2e%2e", Some("/v1/%2e%2e%2e")),
            ("/v1/caf%C3%A9/%unit", Some("/v1/caf%C3%A9/%unit")),
        ];
        for (path, expected) in cases {
            assert_eq!(normalize(path).ok().as_deref(), expected, "{path}");
        }
    }

    #[test]
    fn segments_other_servers_read_as_dots_are_refused() {
        for path in [
            "/..;/..;/admin/keys",
            "/v1/..;/messages",
            "/v1/.;/messages",
            "/v1/.;jsessionid=1/messages",
            "/%2e%2e;/%2e%2e;/admin/keys",
            "/%252e%252e/%252e%252e/admin/keys",
            "/v1/%252E/messages",
            "/v1/%25252e%25252e/x",
            "/v1/%2e%2e%3b/x",
            "/v1/..%253b/x",
            "/v1/a%252fb",
            "/v1/..%00/admin",
            "/v1/%2e%2e%20/admin",
            "/%u002e%u002e/admin/keys",
            "/v1/%U002E/messages",
            "/%c0%ae%c0%ae/admin/keys",
            "/%e0%80%ae%e0%80%ae/admin",
            "/v1/%25c0%25ae/x",
        ] {
            let error = normalize(path).expect_err(path);
            assert!(error.to_string().contains(path), "{error}");
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
