//! The environment the wrapped command gets, and the upstream the sidecar forwards to.

use std::ffi::{OsStr, OsString};
use std::net::{IpAddr, SocketAddr};

/// Points the Claude Code CLI (and the Agent SDK, which starts it) at the sidecar.
pub const BASE_URL: &str = "ANTHROPIC_BASE_URL";

/// Set unless the user set them: behind a custom base URL the CLI stops asking for fine-grained
/// tool streaming (the mode whose input can fail to parse), and defers MCP tool schemas behind
/// tool search (so the request would not carry the schemas repair needs).
pub const DEFAULTS: [(&str, &str); 2] =
    [("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING", "1"), ("ENABLE_TOOL_SEARCH", "false")];

/// The hosts the sidecar is reached at: a user's HTTP_PROXY/HTTPS_PROXY must not get (and hang
/// on) traffic meant for the loopback sidecar.
const LOOPBACK_HOSTS: [&str; 2] = ["127.0.0.1", "localhost"];

/// The variables to set on the command: the base URL and the loopback proxy exceptions always,
/// the others only where `inherited` has no value of its own.
pub fn child_environment(sidecar_url: &str, inherited: impl Fn(&str) -> Option<OsString>) -> Vec<(String, OsString)> {
    let mut variables = vec![(BASE_URL.to_string(), OsString::from(sidecar_url))];
    for name in ["NO_PROXY", "no_proxy"] {
        variables.push((name.to_string(), with_loopback(inherited(name))));
    }
    for (name, value) in DEFAULTS {
        if inherited(name).is_none() {
            variables.push((name.to_string(), value.into()));
        }
    }
    variables
}

/// A NO_PROXY list with the loopback hosts added where missing; the user's entries kept first.
fn with_loopback(existing: Option<OsString>) -> OsString {
    let mut list = existing.unwrap_or_default();
    for host in LOOPBACK_HOSTS {
        let listed = list.to_string_lossy().split(',').any(|entry| entry.trim().eq_ignore_ascii_case(host));
        if !listed {
            if !list.to_string_lossy().trim().is_empty() {
                list.push(",");
            }
            list.push(host);
        }
    }
    list
}

/// Whether `upstream` is the sidecar listening on `listen` itself (a stale ANTHROPIC_BASE_URL
/// from an earlier run): a loopback or unspecified host, or the listen address, on its port.
pub fn is_the_sidecar(upstream: &str, listen: SocketAddr) -> bool {
    let Some(rest) = upstream.strip_prefix("http://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, port.parse::<u16>().ok()),
        _ => (authority, Some(80)),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let local = host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified() || ip == listen.ip());
    local && port == Some(listen.port())
}

/// The upstream when toolmend's own settings name none: the base URL the user had, so the
/// command reaches the endpoint it reached before, now through the sidecar.
pub fn inherited_upstream(base_url: Option<&OsStr>) -> Option<String> {
    let url = base_url?.to_str()?.trim();
    (!url.is_empty()).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_is_always_set_and_the_users_own_values_win_for_the_rest() {
        let none = child_environment("http://127.0.0.1:9", |_| None);
        assert_eq!(
            none,
            [
                ("ANTHROPIC_BASE_URL".to_string(), OsString::from("http://127.0.0.1:9")),
                ("NO_PROXY".to_string(), OsString::from("127.0.0.1,localhost")),
                ("no_proxy".to_string(), OsString::from("127.0.0.1,localhost")),
                ("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING".to_string(), OsString::from("1")),
                ("ENABLE_TOOL_SEARCH".to_string(), OsString::from("false")),
            ]
        );
        let user = |name: &str| (name != "CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING").then(|| "mine".into());
        let names: Vec<String> = child_environment("http://x", user).into_iter().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            ["ANTHROPIC_BASE_URL", "NO_PROXY", "no_proxy", "CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING"]
        );
    }

    #[test]
    fn loopback_is_added_to_the_users_no_proxy_which_is_kept() {
        let user = |name: &str| match name {
            "NO_PROXY" => Some(".corp.example, LOCALHOST".into()),
            "no_proxy" => Some("".into()),
            _ => None,
        };
        let env = child_environment("http://127.0.0.1:9", user);
        let value = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
        assert_eq!(value("NO_PROXY"), Some(OsString::from(".corp.example, LOCALHOST,127.0.0.1")));
        assert_eq!(value("no_proxy"), Some(OsString::from("127.0.0.1,localhost")));
    }

    #[test]
    fn an_upstream_on_the_sidecars_own_port_and_a_local_host_is_a_loop() {
        let listen: SocketAddr = "127.0.0.1:8787".parse().unwrap();
        for upstream in
            ["http://127.0.0.1:8787", "http://localhost:8787/prefix", "http://[::1]:8787", "http://0.0.0.0:8787"]
        {
            assert!(is_the_sidecar(upstream, listen), "{upstream}");
        }
        for upstream in
            ["http://127.0.0.1:8788", "https://127.0.0.1:8787", "http://gw.example:8787", "http://127.0.0.1"]
        {
            assert!(!is_the_sidecar(upstream, listen), "{upstream}");
        }
    }

    #[test]
    fn an_empty_base_url_is_no_upstream() {
        assert_eq!(
            inherited_upstream(Some(OsStr::new(" https://gw.example/anthropic "))).as_deref(),
            Some("https://gw.example/anthropic")
        );
        assert_eq!(inherited_upstream(Some(OsStr::new(""))), None);
        assert_eq!(inherited_upstream(None), None);
    }
}
