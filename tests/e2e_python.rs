//! The real Python SDKs (pinned in tests/e2e/requirements.txt, installed by tests/e2e/setup.sh)
//! through the sidecar to a fake Messages API on loopback.

mod common;

use common::{claude_binary, e2e_dir, python, responder, summary, Scratch, Sidecar};
use serde_json::{json, Value};
use std::time::Duration;
use toolmend::demo::fake_upstream::{FakeUpstream, Reply};
use toolmend::demo::SEED_STREAM;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(e2e_dir().join("../../fixtures/sse").join(name)).unwrap()
}

async fn run_python(args: &[&str], home: &std::path::Path) -> String {
    let output = tokio::process::Command::new(python()).args(args).env("HOME", home).kill_on_drop(true).output();
    let output = tokio::time::timeout(Duration::from_secs(180), output).await.expect("finished in 180 s").unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "python failed: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anthropic_sdk_sees_the_repaired_input_and_identical_streams_otherwise() {
    let (valid, text) = (fixture("valid-tool.sse"), fixture("text-only.sse"));
    let reply = move |request: &toolmend::demo::fake_upstream::RecordedRequest| {
        let model = request.json().unwrap_or_default()["model"].as_str().unwrap_or_default().to_string();
        match model.as_str() {
            "seed" => Reply::sse(SEED_STREAM, 61),
            "valid" => Reply::sse(&valid, 61),
            _ => Reply::sse(&text, 61),
        }
    };
    let direct = FakeUpstream::start(std::sync::Arc::new(reply.clone())).await.unwrap();
    let sidecar = Sidecar::start(reply).await;
    let scratch = Scratch::new("anthropic-sdk");
    let script = e2e_dir().join("anthropic_sdk_check.py");
    let stdout = run_python(&[script.to_str().unwrap(), &direct.url(), &sidecar.url], &scratch.0.join("home")).await;
    let result: Value = serde_json::from_str(&stdout).unwrap();

    let tool_use = |message: &Value| {
        message["content"].as_array().into_iter().flatten().find(|b| b["type"] == "tool_use").cloned()
    };
    let seed = &result["seed"];
    assert_eq!(
        tool_use(&seed["proxied"]).expect("a tool_use")["input"],
        json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]})
    );
    assert!(tool_use(&seed["direct"]).is_none_or(|t| t["input"] != seed["proxied"]["content"][1]["input"]));
    for model in ["valid", "text"] {
        assert_eq!(result[model]["same_bytes"], true, "{model}");
        assert_eq!(result[model]["direct"], result[model]["proxied"], "{model}");
        assert!(result[model]["direct"].get("error").is_none(), "{model}: {}", result[model]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_sdk_in_process_tool_receives_the_repaired_arguments() {
    let sidecar =
        Sidecar::start(responder(r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#)).await;
    let scratch = Scratch::new("agent-sdk");
    let script = e2e_dir().join("agent_sdk_check.py");
    let cli = claude_binary();
    let stdout =
        run_python(&[script.to_str().unwrap(), &sidecar.url, cli.to_str().unwrap()], &scratch.0.join("home")).await;
    let received: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        received,
        json!([{"jurisdiction": "se", "terms": ["token machine payout percentage"]}]),
        "requests: {:?}",
        summary(&sidecar.upstream.requests())
    );
    assert!(sidecar.get("/metrics").await.contains(r#"outcome="repaired"} 1"#));
}
