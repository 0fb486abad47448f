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

/// The headers a message's `Connection` header names: hop-by-hop for that one connection too
/// (RFC 9110 §7.6.1), so `Connection: X-Secret` keeps `X-Secret` from crossing the proxy.
fn named_by_connection(headers: &HeaderMap) -> Vec<HeaderName> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect()
}

/// Request headers for the upstream: all but hop-by-hop (also those `Connection` names), `host`
/// and `content-length`, and an uncompressed body asked for (the stream must be readable to be
/// repaired).
pub fn upstream_request_headers(incoming: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(incoming.len());
    let named = named_by_connection(incoming);
    for (name, value) in incoming {
        if is_hop_by_hop(name)
            || named.contains(name)
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

/// Response headers for the client: all but hop-by-hop (also those `Connection` names);
/// `rewritten` drops `content-length` (the body may change).
pub fn client_response_headers(upstream: &HeaderMap, rewritten: bool) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(upstream.len());
    let named = named_by_connection(upstream);
    for (name, value) in upstream {
        if is_hop_by_hop(name) || named.contains(name) || (rewritten && name == header::CONTENT_LENGTH) {
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

    #[test]
    fn headers_named_in_connection_are_dropped_both_ways() {
        let mut incoming = HeaderMap::new();
        incoming.insert("connection", HeaderValue::from_static("keep-alive, X-Hop-Secret"));
        incoming.append("connection", HeaderValue::from_static(" x-other ,"));
        incoming.insert("x-hop-secret", HeaderValue::from_static("internal-token"));
        incoming.insert("x-other", HeaderValue::from_static("1"));
        incoming.insert("x-api-key", HeaderValue::from_static("sk-test"));
        let out = upstream_request_headers(&incoming);
        assert!(out.get("x-hop-secret").is_none() && out.get("x-other").is_none());
        assert_eq!(out["x-api-key"], "sk-test");
        let mut upstream = HeaderMap::new();
        upstream.insert("connection", HeaderValue::from_static("x-upstream-hop"));
        upstream.insert("x-upstream-hop", HeaderValue::from_static("1"));
        upstream.insert("request-id", HeaderValue::from_static("req_1"));
        let out = client_response_headers(&upstream, false);
        assert!(out.get("x-upstream-hop").is_none());
        assert_eq!(out["request-id"], "req_1");
    }
}
