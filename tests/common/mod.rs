//! Helpers shared by the end-to-end tests: where the real parts are installed, a fake
//! Messages API that offers the seed's call, and a sidecar in front of it.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
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
        // Tests of one binary run at once: a counter keeps equal names apart.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("toolmend-{name}-{}-{n}", std::process::id()));
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

/// A recording hop in front of `target`: every request is kept exactly as the client sent it,
/// then forwarded, and the answer streamed back.
pub struct Tap {
    pub url: String,
    requests: Arc<std::sync::Mutex<Vec<RecordedRequest>>>,
    stop: CancellationToken,
}

impl Tap {
    pub async fn start(target: &str) -> Self {
        use axum::body::Body;
        use axum::extract::Request;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<std::sync::Mutex<Vec<RecordedRequest>>> = Arc::default();
        let (kept, target) = (requests.clone(), target.trim_end_matches('/').to_string());
        let client = reqwest::Client::new();
        let hop = move |request: Request| {
            let (kept, target, client) = (kept.clone(), target.clone(), client.clone());
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
                let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
                let headers: Vec<(String, String)> = parts
                    .headers
                    .iter()
                    .map(|(n, v)| (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect();
                kept.lock().unwrap().push(RecordedRequest {
                    method: parts.method.to_string(),
                    path: path.clone(),
                    headers,
                    body: body.to_vec(),
                });
                let mut forwarded = parts.headers.clone();
                forwarded.remove("host");
                let answer = client
                    .request(parts.method, format!("{target}{path}"))
                    .headers(forwarded)
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let (status, mut headers) = (answer.status(), answer.headers().clone());
                headers.remove("transfer-encoding");
                headers.remove("connection");
                let mut response = axum::response::Response::new(Body::from_stream(answer.bytes_stream()));
                *response.status_mut() = status;
                *response.headers_mut() = headers;
                response
            }
        };
        let stop = CancellationToken::new();
        let app = axum::Router::new().fallback(hop);
        let serve = axum::serve(listener, app).with_graceful_shutdown(stop.clone().cancelled_owned());
        tokio::spawn(std::future::IntoFuture::into_future(serve));
        Self { url, requests, stop }
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Runs `claude` in `work/work` with HOME at `work/home` against `base_url`, with `args`.
pub async fn claude_in(work: &Path, base_url: &str, args: &[&str]) -> String {
    let child = tokio::process::Command::new(claude_binary())
        .args(args)
        .current_dir(work.join("work"))
        .env_clear()
        .envs(offline_claude_env(&work.join("home")))
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING", "1")
        .env("ENABLE_TOOL_SEARCH", "false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starting claude");
    let output = tokio::time::timeout(Duration::from_secs(180), child.wait_with_output()).await.unwrap().unwrap();
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}
