//! The real Claude Code CLI (pinned in tests/e2e/package.json, installed by tests/e2e/setup.sh)
//! in `-p` mode, through the sidecar, to a fake Messages API on loopback, with a real stdio MCP
//! server and real hooks.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolmend::demo::fake_upstream::{FakeUpstream, RecordedRequest, Reply};
use toolmend::demo::script::{text_message, tool_message};
use toolmend::proxy::{Config, Server};

const TOOL: &str = "mcp__search__search";

fn e2e_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e")
}

fn claude_binary() -> PathBuf {
    let path = e2e_dir().join("node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    assert!(path.exists(), "the Claude Code CLI is not installed: run tests/e2e/setup.sh (or tests/run.sh)");
    path
}

/// Whether a request already carries the result of our tool call.
fn has_tool_result(request: &Value) -> bool {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|message| message["content"].as_array().into_iter().flatten().any(|block| block["type"] == "tool_result"))
}

/// The fake API: the malformed call when our tool is offered, text otherwise.
fn responder(raw: &'static str) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync {
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
fn summary(requests: &[RecordedRequest]) -> Vec<String> {
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

struct Run {
    calls: Vec<Value>,
    pre_hooks: String,
    post_hooks: String,
    requests: Vec<RecordedRequest>,
    metrics: String,
    events: Value,
    output: String,
}

async fn run_claude(raw: &'static str) -> Run {
    let upstream = FakeUpstream::start(Arc::new(responder(raw))).await.unwrap();
    let config = Config { listen: "127.0.0.1:0".parse().unwrap(), upstream: upstream.url(), ..Config::default() };
    let server = Server::bind(config).await.unwrap();
    let proxy = format!("http://{}", server.local_addr());
    let stop = CancellationToken::new();
    tokio::spawn(server.run(stop.clone()));

    let work = std::env::temp_dir().join(format!("toolmend-e2e-{}-{}", std::process::id(), raw.len()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("home")).unwrap();
    let calls = work.join("calls.jsonl");
    let (pre, post) = (work.join("pre.log"), work.join("post.log"));
    let mcp_config = json!({"mcpServers": {"search": {
        "command": "node",
        "args": [e2e_dir().join("mcp-search-server.mjs")],
        "env": {"TOOLMEND_E2E_CALLS": calls}
    }}});
    let hook = |log: &Path| {
        json!([{"matcher": TOOL, "hooks": [{"type": "command",
        "command": format!("cat >> '{}'; echo >> '{}'", log.display(), log.display())}]}])
    };
    let settings = json!({"hooks": {"PreToolUse": hook(&pre), "PostToolUse": hook(&post)}});
    std::fs::write(work.join("mcp.json"), mcp_config.to_string()).unwrap();
    std::fs::write(work.join("settings.json"), settings.to_string()).unwrap();

    let child = tokio::process::Command::new(claude_binary())
        .args(["-p", "Search the Swedish rules on token machine payout percentage."])
        .arg("--mcp-config")
        .arg(work.join("mcp.json"))
        .arg("--strict-mcp-config")
        .arg("--settings")
        .arg(work.join("settings.json"))
        .args(["--allowedTools", TOOL, "--max-turns", "3", "--output-format", "text"])
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", work.join("home"))
        .env("ANTHROPIC_BASE_URL", &proxy)
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e-not-a-real-key")
        .env("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starting claude");
    let output = tokio::time::timeout(Duration::from_secs(180), child.wait_with_output())
        .await
        .expect("claude finished within 180 s")
        .unwrap();
    let output = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));

    let client = reqwest::Client::new();
    let metrics = client.get(format!("{proxy}/metrics")).send().await.unwrap().text().await.unwrap();
    let events = client.get(format!("{proxy}/events")).send().await.unwrap().json().await.unwrap();
    stop.cancel();
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    let run = Run {
        calls: read(&calls).lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        pre_hooks: read(&pre),
        post_hooks: read(&post),
        requests: upstream.requests(),
        metrics,
        events,
        output,
    };
    let _ = std::fs::remove_dir_all(&work);
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_the_repaired_seed_call_and_its_hooks_fire() {
    let run = run_claude(r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#).await;
    assert_eq!(
        run.calls,
        [json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]})],
        "the MCP server got the repaired call; claude said: {}; requests: {:?}",
        run.output,
        summary(&run.requests)
    );
    assert!(run.pre_hooks.contains(TOOL), "PreToolUse fired: {:?}", run.pre_hooks);
    assert!(run.post_hooks.contains(TOOL), "PostToolUse fired: {:?}", run.post_hooks);
    let line = format!(r#"toolmend_tool_calls_total{{tool="{TOOL}",outcome="repaired"}} 1"#);
    assert!(run.metrics.contains(&line), "{}", run.metrics);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_call_reaches_claude_code_unchanged_and_the_event_says_why() {
    let run = run_claude(r#"{"jurisdiction": france, "terms": ["x"]}"#).await;
    assert!(run.calls.is_empty(), "the tool never ran: {:?}", run.calls);
    let error_result = run
        .requests
        .iter()
        .filter_map(RecordedRequest::json)
        .flat_map(|body| body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result")
        .expect("claude answered the call with a tool_result");
    assert_eq!(error_result["is_error"], true);
    assert!(error_result.to_string().contains("InputValidationError"), "{error_result}");
    let event = &run.events["events"][0];
    assert_eq!(event["kind"], "refused");
    assert_eq!(event["reason"]["code"], "schema_mismatch");
    assert!(event["reason"]["message"].as_str().unwrap().contains("jurisdiction"), "{event}");
}
