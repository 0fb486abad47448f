//! The real Claude Code CLI (pinned in tests/e2e/package.json, installed by tests/e2e/setup.sh)
//! in `-p` mode, through the sidecar, to a fake Messages API on loopback, with a real stdio MCP
//! server and real hooks.

mod common;

use common::{claude_binary, e2e_dir, responder, summary, Scratch, Sidecar, TOOL};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use toolmend::demo::fake_upstream::RecordedRequest;

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
    let sidecar = Sidecar::start(responder(raw)).await;
    let proxy = sidecar.url.clone();
    let scratch = Scratch::new(&format!("claude-{}", raw.len()));
    let work = scratch.0.clone();
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

    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    Run {
        calls: read(&calls).lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        pre_hooks: read(&pre),
        post_hooks: read(&post),
        requests: sidecar.upstream.requests(),
        metrics: sidecar.get("/metrics").await,
        events: serde_json::from_str(&sidecar.get("/events").await).unwrap(),
        output,
    }
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
