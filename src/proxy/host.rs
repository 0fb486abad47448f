//! The Host check, a router layer: a web page the user visits can point its own name at
//! 127.0.0.1 (DNS rebinding) and then read `/events`; its requests carry that name as Host.
//! Only loopback names, the listen address and `allowed_hosts` are answered.

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
        self.any || self.names.iter().any(|name| name.eq_ignore_ascii_case(host_name(host)))
    }
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
        Some(host) if app.hosts.allows(host) => next.run(request).await,
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
}
