//! Prevention through the sidecar (a fake Messages API behind the real proxy): examples and
//! strict injected together, the fallbacks when the API rejects them, and adaptive strict
//! across a restart.

mod common;

use common::{Scratch, Sidecar};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use toolmend::demo::fake_upstream::Reply;
use toolmend::demo::script::text_message;
use toolmend::demo::{seed_tools, SEED_STREAM};
use toolmend::proxy::examples::{ExamplesConfig, DEFAULT_BETA};
use toolmend::proxy::strict::{StrictConfig, StrictMode};

fn request_body() -> String {
    json!({"model": "m", "max_tokens": 100, "stream": true, "tools": seed_tools(),
           "messages": [{"role": "user", "content": "hi"}]})
    .to_string()
}

/// Posts `body` as a Messages API request and reads the whole answer; its status.
async fn post(sidecar: &Sidecar, body: &str) -> u16 {
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages?beta=true", sidecar.url))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let _ = response.bytes().await;
    status
}

fn events_of(text: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(text).unwrap()["events"].as_array().cloned().unwrap_or_default()
}

fn bad_request(message: &str) -> Reply {
    Reply::json(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}))
}

#[tokio::test]
async fn a_400_blaming_the_examples_reissues_the_original_once_and_later_requests_keep_strict_only() {
    let sidecar = Sidecar::start_with(
        |request| match String::from_utf8_lossy(&request.body).contains("input_examples") {
            true => bad_request("tools.0.input_examples.0: Extra inputs are not permitted"),
            false => Reply::sse(text_message("ok"), 64),
        },
        |config| {
            config.strict = StrictConfig { tools: vec!["search".into()], ..StrictConfig::default() };
            config.examples = ExamplesConfig {
                tools: vec![("sea*".into(), vec![json!({"jurisdiction": "se", "terms": ["payout"]})])],
                ..ExamplesConfig::default()
            };
        },
    )
    .await;
    let body = request_body();
    assert_eq!(post(&sidecar, &body).await, 200);
    assert_eq!(post(&sidecar, &body).await, 200);
    let requests = sidecar.upstream.requests();
    assert_eq!(requests.len(), 3, "injected, the fallback, then strict alone");
    let first = requests[0].json().unwrap();
    assert_eq!(first["tools"][0]["strict"], true);
    assert_eq!(first["tools"][0]["input_examples"], json!([{"jurisdiction": "se", "terms": ["payout"]}]));
    assert_eq!(requests[0].header("anthropic-beta"), Some(DEFAULT_BETA));
    assert_eq!(requests[1].body, body.as_bytes(), "the fallback is the original, byte-identical");
    let third = requests[2].json().unwrap();
    assert_eq!(third["tools"][0]["strict"], true, "strict was not blamed");
    assert!(third["tools"][0].get("input_examples").is_none(), "rejected examples are not sent again");
    assert_eq!(requests[2].header("anthropic-beta"), None);
    let events = events_of(&sidecar.get("/events").await);
    let rejected = events.iter().find(|e| e["kind"] == "examples_rejected").expect("reported");
    assert_eq!(rejected["tools"], json!(["search"]));
}

#[tokio::test]
async fn adaptive_strict_follows_a_repaired_call_across_a_restart_until_the_api_rejects_it() {
    let scratch = Scratch::new("adaptive");
    let state = scratch.0.join("strict-state.json");
    let adaptive = |config: &mut toolmend::proxy::Config| {
        config.strict = StrictConfig {
            mode: Some(StrictMode::Adaptive),
            state_file: Some(state.clone()),
            ..StrictConfig::default()
        }
    };
    let body = request_body();

    let seed_sent = Arc::new(AtomicBool::new(false));
    let sent = seed_sent.clone();
    let sidecar = Sidecar::start_with(
        move |_| match sent.swap(true, Ordering::SeqCst) {
            false => Reply::sse(SEED_STREAM, 64),
            true => Reply::sse(text_message("ok"), 64),
        },
        adaptive,
    )
    .await;
    assert_eq!(post(&sidecar, &body).await, 200);
    assert_eq!(post(&sidecar, &body).await, 200);
    let requests = sidecar.upstream.requests();
    assert_eq!(requests[0].body, body.as_bytes(), "nothing adapted before the repaired call");
    assert_eq!(requests[1].json().unwrap()["tools"][0]["strict"], true);
    let events = events_of(&sidecar.get("/events").await);
    let adapted = events.iter().find(|e| e["kind"] == "strict_adapted").expect("reported");
    assert_eq!((adapted["tool"].as_str(), adapted["outcome"].as_str()), (Some("search"), Some("repaired")));
    assert!(adapted["tool_use_id"].as_str().is_some_and(|id| id.starts_with("toolu_")), "{adapted}");
    assert!(sidecar.get("/metrics").await.contains(r#"toolmend_strict_tools_total{result="adapted"} 1"#));
    drop(sidecar);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&state).unwrap().permissions().mode() & 0o777, 0o600);
    }

    let restarted = Sidecar::start_with(
        |request| match String::from_utf8_lossy(&request.body).contains("\"strict\":true") {
            true => bad_request("Schema is too complex for compilation"),
            false => Reply::sse(text_message("ok"), 64),
        },
        adaptive,
    )
    .await;
    assert_eq!(post(&restarted, &body).await, 200);
    let requests = restarted.upstream.requests();
    assert_eq!(requests[0].json().unwrap()["tools"][0]["strict"], true, "remembered across the restart");
    assert_eq!(requests[1].body, body.as_bytes());
    let events = events_of(&restarted.get("/events").await);
    let rejected = events.iter().find(|e| e["kind"] == "strict_rejected").expect("reported");
    assert_eq!(rejected["dropped_from_adapted"], json!(["search"]));
    assert!(toolmend::proxy::adaptive::read_state(&state).unwrap().is_empty(), "dropped from the state file");
}

#[test]
fn examples_from_a_capture_file_print_a_config_block_of_the_repaired_inputs() {
    let scratch = Scratch::new("examples-from");
    let capture = scratch.0.join("capture.jsonl");
    let lines = [
        json!({"id": "toolu_1", "tool": "search", "raw": "{terms: a b}", "status": "repaired",
               "input": {"jurisdiction": "se", "terms": ["a b"]}}),
        json!({"id": "toolu_2", "tool": "search", "raw": "{x", "status": "refused", "input": null}),
        json!({"id": "toolu_3", "tool": "search", "raw": "{terms: a b}", "status": "repaired",
               "input": {"jurisdiction": "se", "terms": ["a b"]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect::<String>() + "not json\n";
    std::fs::write(&capture, &text).unwrap();
    let output = common::toolmend(&["examples", "--from", capture.to_str().unwrap()], "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "a bad line is reported: {stderr}");
    assert!(stderr.contains("capture.jsonl line 4: not JSON"), "{stderr}");
    let block = String::from_utf8(output.stdout).unwrap();
    #[derive(serde::Deserialize)]
    struct File {
        examples: ExamplesConfig,
    }
    let parsed: File = toml::from_str(&block).unwrap();
    assert_eq!(parsed.examples.tools, [("search".to_string(), vec![json!({"jurisdiction": "se", "terms": ["a b"]})])]);
    assert_eq!(std::fs::read_to_string(&capture).unwrap(), text, "the capture file is only read");
}
