//! Which headers cross the proxy.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};

/// Connection-level headers that never cross a proxy (RFC 9110 §7.6.1), plus the ones the
/// proxy sets itself.
fn is_hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

/// Request headers for the upstream: all but hop-by-hop, `host` and `content-length`, and an
/// uncompressed body asked for (the stream must be readable to be repaired).
pub fn upstream_request_headers(incoming: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(incoming.len());
    for (name, value) in incoming {
        if is_hop_by_hop(name)
            || name == header::HOST
            || name == header::CONTENT_LENGTH
            || name == header::ACCEPT_ENCODING
        {
            continue;
        }
        headers.append(name.clone(), value.clone());
    }
    headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    headers
}

/// Response headers for the client; `rewritten` drops `content-length` (the body may change).
pub fn client_response_headers(upstream: &HeaderMap, rewritten: bool) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(upstream.len());
    for (name, value) in upstream {
        if is_hop_by_hop(name) || (rewritten && name == header::CONTENT_LENGTH) {
            continue;
        }
        headers.append(name.clone(), value.clone());
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_and_encoding_headers_are_replaced() {
        let mut incoming = HeaderMap::new();
        incoming.insert("x-api-key", HeaderValue::from_static("sk-test"));
        incoming.insert("connection", HeaderValue::from_static("keep-alive"));
        incoming.insert("accept-encoding", HeaderValue::from_static("gzip, br"));
        incoming.insert("host", HeaderValue::from_static("127.0.0.1:8787"));
        incoming.append("anthropic-beta", HeaderValue::from_static("a"));
        incoming.append("anthropic-beta", HeaderValue::from_static("b"));
        let out = upstream_request_headers(&incoming);
        assert_eq!(out["x-api-key"], "sk-test");
        assert_eq!(out["accept-encoding"], "identity");
        assert!(out.get("connection").is_none() && out.get("host").is_none());
        assert_eq!(out.get_all("anthropic-beta").iter().count(), 2);
    }
}
