//! The real Claude Code CLI through the sidecar, with a Bash call whose input the model wrote in
//! its own XML parameter syntax: repaired, the CLI runs it; a parameter the tool does not
//! declare is refused and reaches the CLI unchanged.

mod common;

use common::{claude_in, has_tool_result, Scratch, Sidecar};
use serde_json::{json, Value};
use toolmend::demo::fake_upstream::{RecordedRequest, Reply};
use toolmend::demo::script::{text_message, tool_message};

/// The fake API: a Bash call with `raw` as its input while Bash is offered and unanswered.
fn bash_responder(raw: &'static str) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync {
    move |request| {
        if !request.path.contains("/v1/messages") || request.path.contains("count_tokens") {
            return Reply::json(200, &json!({"input_tokens": 10}));
        }
        let body = request.json().unwrap_or_default();
        let offers_bash = body["tools"].as_array().into_iter().flatten().any(|t| t["name"] == "Bash");
        if offers_bash && !has_tool_result(&body) {
            Reply::sse(tool_message("toolu_bash", "Bash", raw, 9), 97)
        } else {
            Reply::sse(text_message("Done."), 97)
        }
    }
}

struct Run {
    ran: bool,
    tool_result: Option<Value>,
    events: Value,
    output: String,
}

async fn run_bash(raw: &'static str) -> Run {
    let sidecar = Sidecar::start(bash_responder(raw)).await;
    let scratch = Scratch::new(&format!("foreign-{}", raw.len()));
    std::fs::create_dir_all(scratch.0.join("work")).unwrap();
    let output = claude_in(
        &scratch.0,
        &sidecar.url,
        &["-p", "Make the marker file.", "--allowedTools", "Bash", "--max-turns", "3"],
    )
    .await;
    let tool_result = sidecar
        .upstream
        .requests()
        .iter()
        .filter_map(RecordedRequest::json)
        .flat_map(|body| body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == "toolu_bash");
    Run {
        ran: scratch.0.join("work/marker.txt").exists(),
        tool_result,
        events: serde_json::from_str(&sidecar.get("/events").await).unwrap(),
        output,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_runs_a_bash_call_written_in_parameter_syntax() {
    let run = run_bash("<parameter name=\"command\">echo toolmend > marker.txt</parameter>\n<parameter name=\"description\">Make the marker</parameter>").await;
    assert!(run.ran, "Bash ran the repaired command; claude said: {}; result: {:?}", run.output, run.tool_result);
    let result = run.tool_result.expect("the CLI answered the call");
    assert_ne!(result["is_error"], true, "{result}");
    let event = &run.events["events"][0];
    assert_eq!(event["kind"], "repaired", "{event}");
    assert_eq!(event["input"], json!({"command": "echo toolmend > marker.txt", "description": "Make the marker"}));
    assert!(event["edits"].to_string().contains("foreign_syntax"), "{event}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_parameter_reaches_claude_code_unchanged() {
    let run = run_bash("<parameter name=\"cmd\">echo toolmend > marker.txt</parameter>").await;
    assert!(!run.ran, "nothing ran; claude said: {}", run.output);
    let result = run.tool_result.expect("the CLI answered the call with an error");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(result.to_string().contains("InputValidationError"), "{result}");
    let event = &run.events["events"][0];
    assert_eq!(event["kind"], "refused", "{event}");
    assert!(event["reason"]["message"].as_str().unwrap().contains("'cmd'"), "{event}");
}
