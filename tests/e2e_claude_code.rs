//! The real Claude Code CLI (pinned in tests/e2e/package.json, installed by tests/e2e/setup.sh)
//! in `-p` mode, through the sidecar, to a fake Messages API on loopback, with a real stdio MCP
//! server and real hooks.

mod common;

use common::{claude_in, e2e_dir, responder, summary, Scratch, Sidecar, Tap, TOOL};
use serde_json::{json, Value};
use std::path::Path;
use toolmend::demo::fake_upstream::RecordedRequest;

struct Run {
    calls: Vec<Value>,
    pre_hooks: String,
    post_hooks: String,
    requests: Vec<RecordedRequest>,
    /// The requests as the CLI sent them, before the sidecar.
    sent: Vec<RecordedRequest>,
    metrics: String,
    events: Value,
    output: String,
}

async fn run_claude(raw: &'static str) -> Run {
    run_claude_with(raw, |_| {}).await
}

async fn run_claude_with(raw: &'static str, tweak: impl FnOnce(&mut toolmend::proxy::Config)) -> Run {
    let sidecar = Sidecar::start_with(responder(raw), tweak).await;
    let tap = Tap::start(&sidecar.url).await;
    let proxy = tap.url.clone();
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

    std::fs::create_dir_all(work.join("work")).unwrap();
    let (mcp_path, settings_path) = (work.join("mcp.json"), work.join("settings.json"));
    let output = claude_in(
        &work,
        &proxy,
        &[
            "-p",
            "Search the Swedish rules on token machine payout percentage.",
            "--mcp-config",
            mcp_path.to_str().unwrap(),
            "--strict-mcp-config",
            "--settings",
            settings_path.to_str().unwrap(),
            "--allowedTools",
            TOOL,
            "--max-turns",
            "3",
        ],
    )
    .await;

    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    Run {
        calls: read(&calls).lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        pre_hooks: read(&pre),
        post_hooks: read(&post),
        requests: sidecar.upstream.requests(),
        sent: tap.requests(),
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

/// Claude Code's project folder name for a working directory.
fn project_folder(cwd: &Path) -> String {
    cwd.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_resumes_a_fixed_transcript_and_sends_the_repaired_input() {
    let recorded =
        std::fs::read_to_string(e2e_dir().join("../../fixtures/transcripts/real-cli-2.1.332.jsonl")).unwrap();
    let repairer = toolmend::offline::Repairer::new(Default::default());
    let (fixed, summary) = toolmend::offline::fix::fix_transcript(recorded.as_bytes(), &repairer);
    assert_eq!(summary.repaired, ["toolu_01A"]);

    let scratch = Scratch::new("resume");
    let cwd = scratch.0.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let project = scratch.0.join("home/.claude/projects").join(project_folder(&cwd));
    std::fs::create_dir_all(&project).unwrap();
    let session = "3f94dac8-58b5-42a2-a45d-ca15d250a8cf";
    std::fs::write(project.join(format!("{session}.jsonl")), fixed).unwrap();

    let upstream =
        toolmend::demo::fake_upstream::FakeUpstream::start(std::sync::Arc::new(responder("{}"))).await.unwrap();
    let output = claude_in(&scratch.0, &upstream.url(), &["-p", "continue", "--resume", session]).await;
    let sent_input = upstream
        .requests()
        .iter()
        .filter_map(RecordedRequest::json)
        .flat_map(|body| body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["id"] == "toolu_01A")
        .map(|block| block["input"].clone());
    assert_eq!(
        sent_input,
        Some(json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]})),
        "claude said: {output}; requests: {:?}",
        summary_of(&upstream)
    );
}

fn summary_of(upstream: &toolmend::demo::fake_upstream::FakeUpstream) -> Vec<String> {
    summary(&upstream.requests())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_post_tool_batch_hook_reports_the_call_and_the_model_gets_the_corrected_input() {
    let upstream = toolmend::demo::fake_upstream::FakeUpstream::start(std::sync::Arc::new(responder(
        r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#,
    )))
    .await
    .unwrap();
    let scratch = Scratch::new("hook");
    std::fs::create_dir_all(scratch.0.join("work")).unwrap();
    let (reports, stdin_copy) = (scratch.0.join("reports.jsonl"), scratch.0.join("hook-stdin.json"));
    let command = format!(
        "tee '{}' | '{}' hook post-tool-batch --report-file '{}'",
        stdin_copy.display(),
        env!("CARGO_BIN_EXE_toolmend"),
        reports.display()
    );
    let settings = json!({"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": command}]}]}});
    let mcp = json!({"mcpServers": {"search": {"command": "node", "args": [e2e_dir().join("mcp-search-server.mjs")],
        "env": {"TOOLMEND_E2E_CALLS": scratch.0.join("calls.jsonl")}}}});
    std::fs::write(scratch.0.join("settings.json"), settings.to_string()).unwrap();
    std::fs::write(scratch.0.join("mcp.json"), mcp.to_string()).unwrap();
    let (settings_path, mcp_path) = (scratch.0.join("settings.json"), scratch.0.join("mcp.json"));
    let output = claude_in(
        &scratch.0,
        &upstream.url(),
        &[
            "-p",
            "Search the Swedish rules.",
            "--mcp-config",
            mcp_path.to_str().unwrap(),
            "--strict-mcp-config",
            "--settings",
            settings_path.to_str().unwrap(),
            "--allowedTools",
            TOOL,
            "--max-turns",
            "3",
        ],
    )
    .await;
    let hook_stdin = std::fs::read_to_string(&stdin_copy).unwrap_or_default();
    let report: Value =
        serde_json::from_str(std::fs::read_to_string(&reports).unwrap_or_default().lines().next().unwrap_or("null"))
            .unwrap();
    assert_eq!(report["kind"], "hook_repaired", "hook stdin: {hook_stdin}; claude said: {output}");
    assert_eq!(
        report["input"],
        json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}),
        "{hook_stdin}"
    );
    let later_requests: Vec<String> =
        upstream.requests().iter().map(|r| String::from_utf8_lossy(&r.body).into_owned()).collect();
    assert!(
        later_requests.iter().any(|body| body.contains("The corrected input is")),
        "the next request carries the additionalContext; requests: {:?}",
        summary_of(&upstream)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_normally_with_its_mcp_tool_made_strict() {
    let run = run_claude_with(r#"{"jurisdiction": "se", "terms": ["payout"]}"#, |config| {
        config.strict =
            toolmend::proxy::strict::StrictConfig { tools: vec!["mcp__search__*".into()], ..Default::default() }
    })
    .await;
    let offered = run
        .requests
        .iter()
        .filter_map(RecordedRequest::json)
        .flat_map(|body| body["tools"].as_array().cloned().unwrap_or_default())
        .find(|tool| tool["name"] == TOOL)
        .expect("the MCP tool was offered");
    assert_eq!(offered["strict"], true, "{offered}");
    assert_eq!(offered["input_schema"]["additionalProperties"], false);
    assert_eq!(run.calls, [json!({"jurisdiction": "se", "terms": ["payout"]})], "claude said: {}", run.output);
    assert!(run.metrics.contains(r#"toolmend_strict_tools_total{result="injected"}"#), "{}", run.metrics);
}

/// The byte range of the `tools` entry named `name` in a request body.
fn tool_entry_span(body: &[u8], name: &str) -> Option<std::ops::Range<usize>> {
    #[derive(serde::Deserialize)]
    struct Tools<'a> {
        #[serde(borrow)]
        tools: Vec<&'a serde_json::value::RawValue>,
    }
    let text = std::str::from_utf8(body).ok()?;
    let tools: Tools = serde_json::from_str(text).ok()?;
    let entry =
        tools.tools.iter().find(|raw| serde_json::from_str::<Value>(raw.get()).is_ok_and(|t| t["name"] == name))?;
    let start = entry.get().as_ptr() as usize - text.as_ptr() as usize;
    Some(start..start + entry.get().len())
}

/// Names of the tools a request marks strict.
fn strict_tools(body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().into_iter().flatten();
    tools.filter(|t| t["strict"] == true).filter_map(|t| t["name"].as_str().map(String::from)).collect()
}

/// Messages API requests that offer the MCP tool, in order.
fn offering_tool(requests: &[RecordedRequest]) -> Vec<&RecordedRequest> {
    requests
        .iter()
        .filter(|r| r.json().is_some_and(|b| b["tools"].as_array().into_iter().flatten().any(|t| t["name"] == TOOL)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_offers_its_mcp_tool_with_examples_and_every_other_byte_is_the_clis() {
    let valid = json!({"jurisdiction": "se", "terms": ["slot machine", "payout"]});
    let examples = vec![valid.clone(), json!({"jurisdiction": "se", "terms": "payout"})];
    let run = run_claude_with(r#"{"jurisdiction": "se", "terms": ["payout"]}"#, |config| {
        config.examples =
            toolmend::proxy::examples::ExamplesConfig { tools: vec![(TOOL.into(), examples)], ..Default::default() }
    })
    .await;
    assert_eq!(run.calls, [json!({"jurisdiction": "se", "terms": ["payout"]})], "claude said: {}", run.output);
    let upstream = offering_tool(&run.requests);
    assert!(!upstream.is_empty(), "requests: {:?}", summary(&run.requests));
    for seen in upstream {
        let span = tool_entry_span(&seen.body, TOOL).unwrap();
        let (before, after) = (&seen.body[..span.start], &seen.body[span.end..]);
        let sent = run
            .sent
            .iter()
            .find(|r| {
                r.body.starts_with(before) && r.body.ends_with(after) && r.body.len() >= before.len() + after.len()
            })
            .expect("the CLI sent this request with only the MCP tool's entry different");
        let mut entry: Value = serde_json::from_slice(&seen.body[span.clone()]).unwrap();
        let client_entry: Value =
            serde_json::from_slice(&sent.body[span.start..sent.body.len() - after.len()]).unwrap();
        assert_eq!(entry["input_examples"], json!([valid]), "only the valid example is sent");
        entry.as_object_mut().unwrap().remove("input_examples");
        assert_eq!(entry, client_entry, "the entry is the CLI's plus input_examples");
        let beta = seen.header("anthropic-beta").unwrap_or_default();
        assert!(beta.contains(toolmend::proxy::examples::DEFAULT_BETA), "{beta}");
    }
    let skipped = run.events["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "examples_skipped")
        .cloned()
        .expect("the invalid example is reported");
    assert_eq!((&skipped["tool"], &skipped["example"]), (&json!(TOOL), &json!(1)), "{skipped}");
    assert!(skipped["reason"].as_str().unwrap().contains("'/terms'"), "{skipped}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_strict_makes_the_repaired_tool_strict_on_the_next_request_and_after_a_restart() {
    let state_dir = Scratch::new("adaptive-state");
    let state = state_dir.0.join("strict-state.json");
    let adaptive = |config: &mut toolmend::proxy::Config| {
        config.strict = toolmend::proxy::strict::StrictConfig {
            mode: Some(toolmend::proxy::strict::StrictMode::Adaptive),
            state_file: Some(state.clone()),
            ..Default::default()
        }
    };
    let run = run_claude_with(r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#, adaptive).await;
    assert_eq!(
        run.calls,
        [json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]})],
        "{}",
        run.output
    );
    let upstream = offering_tool(&run.requests);
    assert!(upstream.len() >= 2, "requests: {:?}", summary(&run.requests));
    let cli_strict: Vec<String> =
        run.sent.iter().filter_map(RecordedRequest::json).flat_map(|b| strict_tools(&b)).collect();
    assert!(cli_strict.is_empty(), "the CLI itself marks no tool strict: {cli_strict:?}");
    assert!(strict_tools(&upstream[0].json().unwrap()).is_empty(), "turn 1: nothing adapted yet");
    assert_eq!(strict_tools(&upstream[1].json().unwrap()), [TOOL], "the next request: that tool and no other");
    let adapted = run.events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "strict_adapted").cloned();
    let adapted = adapted.expect("the switch is an event");
    assert_eq!((&adapted["tool"], &adapted["tool_use_id"]), (&json!(TOOL), &json!("toolu_e2e")), "{adapted}");
    assert!(run.metrics.contains(r#"toolmend_strict_tools_total{result="adapted"} 1"#), "{}", run.metrics);

    let check = common::toolmend(&["strict-check", "--state", state.to_str().unwrap()], "");
    let listed = String::from_utf8_lossy(&check.stdout);
    assert!(listed.contains(&format!("{TOOL}: since call toolu_e2e was repaired")), "{listed}");

    let restarted = run_claude_with(r#"{"jurisdiction": "se", "terms": ["payout"]}"#, adaptive).await;
    let upstream = offering_tool(&restarted.requests);
    let first = upstream.first().expect("the tool was offered").json().unwrap();
    assert_eq!(strict_tools(&first), [TOOL], "the first request after the restart: {:?}", summary(&restarted.requests));
    assert_eq!(restarted.calls, [json!({"jurisdiction": "se", "terms": ["payout"]})], "{}", restarted.output);
}
