//! Helpers shared by the end-to-end tests: where the real parts are installed, a fake
//! Messages API that offers the seed's call, and a sidecar in front of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolmend::demo::fake_upstream::{FakeUpstream, RecordedRequest, Reply};
use toolmend::demo::script::{text_message, tool_message};
use toolmend::proxy::{Config, Server};

/// Runs the `toolmend` binary in the repository root with `stdin`.
pub fn toolmend(args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The MCP tool as Claude Code names it.
pub const TOOL: &str = "mcp__search__search";

pub fn e2e_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e")
}

pub fn claude_binary() -> PathBuf {
    let path = e2e_dir().join("node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    assert!(path.exists(), "the Claude Code CLI is not installed: run tests/e2e/setup.sh (or tests/run.sh)");
    path
}

pub fn python() -> PathBuf {
    let path = e2e_dir().join(".venv/bin/python");
    assert!(path.exists(), "the Python SDKs are not installed: run tests/e2e/setup.sh (or tests/run.sh)");
    path
}

/// Whether a request already carries a tool result.
pub fn has_tool_result(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|message| message["content"].as_array().into_iter().flatten().any(|block| block["type"] == "tool_result"))
}

/// The fake API: `raw` as the input of a call to our tool when the tool is offered and not yet
/// answered, text otherwise.
pub fn responder(raw: &'static str) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync {
    move |request| {
        if !request.path.contains("/v1/messages") {
            return Reply::json(200, &json!({}));
        }
        if request.path.contains("count_tokens") {
            return Reply::json(200, &json!({"input_tokens": 10}));
        }
        let body = request.json().unwrap_or_default();
        let offers_tool = body["tools"].as_array().into_iter().flatten().any(|t| t["name"] == TOOL);
        if offers_tool && !has_tool_result(&body) {
            Reply::sse(tool_message("toolu_e2e", TOOL, raw, 11), 97)
        } else {
            Reply::sse(text_message("Done."), 97)
        }
    }
}

/// Method, path and offered tool names of each request, for failure messages.
pub fn summary(requests: &[RecordedRequest]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            let body = r.json().unwrap_or_default();
            let tools: Vec<&str> =
                body["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
            format!("{} {} tools={tools:?}", r.method, r.path)
        })
        .collect()
}

pub struct Sidecar {
    pub upstream: FakeUpstream,
    pub url: String,
    stop: CancellationToken,
}

impl Sidecar {
    pub async fn start(reply: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_with(reply, |_| {}).await
    }

    pub async fn start_with(
        reply: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
        tweak: impl FnOnce(&mut Config),
    ) -> Self {
        let upstream = FakeUpstream::start(Arc::new(reply)).await.unwrap();
        let mut config =
            Config { listen: "127.0.0.1:0".parse().unwrap(), upstream: upstream.url(), ..Config::default() };
        tweak(&mut config);
        let server = Server::bind(config).await.unwrap();
        let url = format!("http://{}", server.local_addr());
        let stop = CancellationToken::new();
        tokio::spawn(server.run(stop.clone()));
        Self { upstream, url, stop }
    }

    pub async fn get(&self, path: &str) -> String {
        reqwest::get(format!("{}{path}", self.url)).await.unwrap().text().await.unwrap()
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A scratch folder removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("toolmend-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join("home")).unwrap();
        Self(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The seed's malformed input for the search tool.
pub const SEED_RAW: &str = r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#;

/// The variables that keep the real CLI quiet and offline in a test, with HOME at `home`: no
/// updater, telemetry or error reports, a fake key. Nothing points it at an API.
pub fn offline_claude_env(home: &Path) -> Vec<(String, std::ffi::OsString)> {
    [
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("HOME", home.as_os_str().to_owned()),
        ("ANTHROPIC_API_KEY", "sk-ant-e2e-not-a-real-key".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect()
}

/// An MCP config with the search server (recording its calls in `calls`), written to `path`.
pub fn write_mcp_config(path: &Path, calls: &Path) {
    let config = json!({"mcpServers": {"search": {
        "command": "node",
        "args": [e2e_dir().join("mcp-search-server.mjs")],
        "env": {"TOOLMEND_E2E_CALLS": calls}
    }}});
    std::fs::write(path, config.to_string()).unwrap();
}

/// The JSON lines of a file that may not exist.
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}
