//! The environment the wrapped command gets, and the upstream the sidecar forwards to.

use std::ffi::{OsStr, OsString};

/// Points the Claude Code CLI (and the Agent SDK, which starts it) at the sidecar.
pub const BASE_URL: &str = "ANTHROPIC_BASE_URL";

/// Set unless the user set them: behind a custom base URL the CLI stops asking for fine-grained
/// tool streaming (the mode whose input can fail to parse), and defers MCP tool schemas behind
/// tool search (so the request would not carry the schemas repair needs).
pub const DEFAULTS: [(&str, &str); 2] =
    [("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING", "1"), ("ENABLE_TOOL_SEARCH", "false")];

/// The variables to set on the command: the base URL always, the others only where `inherited`
/// has no value of its own.
pub fn child_environment(sidecar_url: &str, inherited: impl Fn(&str) -> Option<OsString>) -> Vec<(String, OsString)> {
    let mut variables = vec![(BASE_URL.to_string(), OsString::from(sidecar_url))];
    for (name, value) in DEFAULTS {
        if inherited(name).is_none() {
            variables.push((name.to_string(), value.into()));
        }
    }
    variables
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
                ("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING".to_string(), OsString::from("1")),
                ("ENABLE_TOOL_SEARCH".to_string(), OsString::from("false")),
            ]
        );
        let user = |name: &str| (name != "CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING").then(|| "mine".into());
        let names: Vec<String> = child_environment("http://x", user).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["ANTHROPIC_BASE_URL", "CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING"]);
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
