//! The Host check, a router layer: a web page the user visits can point its own name at
//! 127.0.0.1 (DNS rebinding) and then read `/events`; its requests carry that name as Host.
//! Only loopback names, the listen address and `allowed_hosts` are answered.
//! The Origin check, in the same layer: a page on another site can still send a simple
//! cross-site `POST` to 127.0.0.1 (no preflight); to an upstream that authenticates by network
//! position that spends tokens and puts calls into `/events`. Browsers mark such requests with
//! `Origin` and `Sec-Fetch-Site`; the CLI and the SDKs send neither.

use super::config::Config;
use super::App;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

/// Host names (without port, lowercase) the sidecar answers to.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    names: Vec<String>,
    any: bool,
}

impl AllowedHosts {
    pub fn new(config: &Config) -> Self {
        let listen = match config.listen.ip() {
            std::net::IpAddr::V4(ip) => ip.to_string(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        };
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(String::from).into();
        names.push(listen);
        names.extend(config.allowed_hosts.iter().map(|name| name.to_ascii_lowercase()));
        Self { any: config.allowed_hosts.iter().any(|name| name == "*"), names }
    }

    /// Whether a Host header value (`name` or `name:port`) is accepted.
    pub fn allows(&self, host: &str) -> bool {
        self.any || self.named(host)
    }

    /// Whether a browser's `Origin` (`scheme://host[:port]`) is a page of the sidecar's own
    /// names: loopback, the listen address or one named in `allowed_hosts` (`"*"` does not
    /// open this: any site is not a deliberate choice of pages). `null` is no such page.
    pub fn allows_origin(&self, origin: &str) -> bool {
        let host = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
        host.is_some_and(|host| !host.contains('/') && self.named(host))
    }

    fn named(&self, host: &str) -> bool {
        self.names.iter().any(|name| name.eq_ignore_ascii_case(host_name(host)))
    }
}

/// Why a request is refused as a browser's cross-site request, if it is one.
fn cross_site(hosts: &AllowedHosts, headers: &header::HeaderMap) -> Option<String> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = String::from_utf8_lossy(origin.as_bytes());
        if !hosts.allows_origin(&origin) {
            return Some(format!("Origin '{origin}' is not a loopback origin"));
        }
    }
    let site = headers.get("sec-fetch-site").map(|value| value.as_bytes());
    site.is_some_and(|site| site.eq_ignore_ascii_case(b"cross-site")).then(|| "Sec-Fetch-Site is cross-site".into())
}

/// The name part of a Host value: `[::1]:8787` → `[::1]`, `localhost:1` → `localhost`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// The layer: the request goes on, or a 421 that says why.
pub async fn check(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| request.uri().authority().map(|authority| authority.as_str()));
    match host {
        Some(host) if app.hosts.allows(host) => match cross_site(&app.hosts, request.headers()) {
            None => next.run(request).await,
            Some(why) => {
                let message = format!(
                    "toolmend: {why}; a web page on another site may not use the sidecar (clients and SDKs send \
                     no Origin; add the page's host to allowed_hosts to allow it)"
                );
                tracing::warn!(reason = why, "request refused: cross-site browser request");
                let body = json!({"type": "error", "error": {"type": "permission_error", "message": message}});
                (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
            }
        },
        host => {
            let message = format!(
                "toolmend: Host '{}' is not accepted; only localhost, 127.0.0.1, [::1] and the listen address are \
                 (add the name to allowed_hosts for deliberate remote use)",
                host.unwrap_or("")
            );
            tracing::warn!(host = host.unwrap_or(""), "request refused: Host not accepted");
            let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}});
            (StatusCode::MISDIRECTED_REQUEST, axum::Json(body)).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_the_listen_address_with_any_port() {
        let config = Config { listen: "192.168.1.5:8787".parse().unwrap(), allow_remote: true, ..Config::default() };
        let hosts = AllowedHosts::new(&config);
        for host in ["localhost", "LOCALHOST:1", "127.0.0.1:8787", "[::1]", "[::1]:9", "192.168.1.5:8787"] {
            assert!(hosts.allows(host), "{host}");
        }
        for host in
            ["attacker.example", "localhost.attacker.example", "127.0.0.1.nip.io:8787", "[::2]:1", "", "10.0.0.1"]
        {
            assert!(!hosts.allows(host), "{host}");
        }
    }

    #[test]
    fn allowed_hosts_adds_names_and_star_accepts_any() {
        let config = Config { allowed_hosts: vec!["Sidecar.Internal".into()], ..Config::default() };
        let hosts = AllowedHosts::new(&config);
        assert!(hosts.allows("sidecar.internal:8787"));
        assert!(!hosts.allows("other.internal"));
        let any = AllowedHosts::new(&Config { allowed_hosts: vec!["*".into()], ..Config::default() });
        assert!(any.allows("anything.example"));
    }

    #[test]
    fn only_origins_of_the_sidecars_own_names_are_accepted() {
        let config = Config { allowed_hosts: vec!["*".into(), "sidecar.internal".into()], ..Config::default() };
        let hosts = AllowedHosts::new(&config);
        for origin in ["http://127.0.0.1:8787", "http://localhost:3000", "https://[::1]", "http://sidecar.internal"] {
            assert!(hosts.allows_origin(origin), "{origin}");
        }
        for origin in
            ["https://evil.example", "null", "http://127.0.0.1.evil.example", "file://", "", "http://localhost/x"]
        {
            assert!(!hosts.allows_origin(origin), "{origin}");
        }
        let mut headers = header::HeaderMap::new();
        assert!(cross_site(&hosts, &headers).is_none(), "no Origin: a CLI or an SDK");
        headers.insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert!(cross_site(&hosts, &headers).unwrap().contains("Sec-Fetch-Site"));
        headers.insert("sec-fetch-site", "same-origin".parse().unwrap());
        headers.insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert!(cross_site(&hosts, &headers).unwrap().contains("evil.example"));
    }
}
