//! Offline tools on recorded transcripts: scan, fix-transcript and the PostToolBatch hook.

mod common;

use common::toolmend;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmend-offline-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn scan_counts_match_the_hand_count_per_tool() {
    let output = toolmend(&["scan", "fixtures/transcripts/projects", "--json"], "");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("fixtures/transcripts/expected-scan.json")).unwrap())
            .unwrap();
    assert_eq!(report["files"], expected["files"]);
    assert_eq!(report["tools"], expected["tools"]);
    let problems: Vec<String> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}:{} {}",
                Path::new(p["file"].as_str().unwrap()).file_name().unwrap().to_string_lossy(),
                p["line"],
                p["message"]
            )
        })
        .collect();
    assert_eq!(
        problems,
        [
            "broken.jsonl:1 \"not UTF-8 (invalid byte at offset 0 of the line): skipped\"",
            "cccccccc-0000-4000-8000-000000000003.jsonl:5 \"half-written last line: skipped\""
        ]
    );
}

#[test]
fn fix_transcript_changes_only_the_repaired_inputs_and_never_overwrites() {
    let dir = scratch("fix");
    let input = root().join("fixtures/transcripts/projects/-home-dev-app/aaaaaaaa-0000-4000-8000-000000000001.jsonl");
    let out = dir.join("fixed.jsonl");
    let before = std::fs::read_to_string(&input).unwrap();
    let output = toolmend(&["fix-transcript", input.to_str().unwrap(), out.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), before, "the input is never written");
    let after = std::fs::read_to_string(&out).unwrap();
    let (old_lines, new_lines): (Vec<&str>, Vec<&str>) = (before.split('\n').collect(), after.split('\n').collect());
    assert_eq!(old_lines.len(), new_lines.len());
    let mut repaired = Vec::new();
    for (old, new) in old_lines.iter().zip(&new_lines).filter(|(o, n)| o != n) {
        let (mut old, new): (Value, Value) = (serde_json::from_str(old).unwrap(), serde_json::from_str(new).unwrap());
        for (index, block) in new["message"]["content"].as_array().unwrap().iter().enumerate() {
            if old["message"]["content"][index]["input"] != block["input"] {
                assert!(old["message"]["content"][index]["input"].get("__unparsedToolInput").is_some());
                repaired.push((block["id"].clone(), block["input"].clone()));
                old["message"]["content"][index]["input"] = block["input"].clone();
            }
        }
        assert_eq!(old, new, "nothing but the repaired input changed");
    }
    assert_eq!(
        repaired,
        [
            (json!("toolu_a1"), json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]})),
            (json!("toolu_a2"), json!({"jurisdiction": "se", "terms": ["slots", "payout ratio"]})),
        ]
    );
    let again = toolmend(&["fix-transcript", input.to_str().unwrap(), out.to_str().unwrap()], "");
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never writes over"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), after);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_hook_prints_the_corrected_input_and_reports_it() {
    let dir = scratch("hook");
    let reports = dir.join("reports.jsonl");
    let transcript =
        root().join("fixtures/transcripts/projects/-home-dev-app/aaaaaaaa-0000-4000-8000-000000000001.jsonl");
    let stdin = json!({
        "hook_event_name": "PostToolBatch",
        "transcript_path": transcript,
        "tool_calls": [
            {"tool_name": "mcp__search__search", "tool_use_id": "toolu_a1",
             "tool_input": {"__unparsedToolInput": {"raw": "{\"jurisdiction\": \"se\", \"terms\": token machine payout percentage}", "len": 64}}},
            {"tool_name": "mcp__search__search", "tool_use_id": "toolu_a3",
             "tool_input": {"__unparsedToolInput": {"raw": "{\"jurisdiction\": sweden, \"terms\": [\"payout\"]}", "len": 43}}},
            {"tool_name": "Bash", "tool_use_id": "toolu_ok", "tool_input": {"command": "ls"}}
        ]
    });
    let output = toolmend(&["hook", "post-tool-batch", "--report-file", reports.to_str().unwrap()], &stdin.to_string());
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let context = printed["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert_eq!(printed["hookSpecificOutput"]["hookEventName"], "PostToolBatch");
    assert!(
        context
            .contains(r#"The corrected input is: {"jurisdiction":"se","terms":["token machine payout percentage"]}"#),
        "{context}"
    );
    assert!(context.contains("toolu_a3") && context.contains("could not be repaired safely"), "{context}");
    let kinds: Vec<Value> = std::fs::read_to_string(&reports)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["kind"].clone())
        .collect();
    assert_eq!(kinds, [json!("hook_repaired"), json!("hook_refused")]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_hook_never_fails_and_refuses_without_a_schema() {
    let broken = toolmend(&["hook", "post-tool-batch"], "not json");
    assert_eq!(broken.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("not JSON"));
    let no_transcript = json!({"tool_calls": [{"tool_name": "x", "tool_use_id": "t",
        "tool_input": {"__unparsedToolInput": {"raw": "{\"a\": b}", "len": 8}}}]});
    let output = toolmend(&["hook", "post-tool-batch"], &no_transcript.to_string());
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(printed.to_string().contains("no schema recorded for tool 'x'"), "{printed}");
}

const BASH: &str = "Bash";

fn bash_shape() -> Value {
    json!({"type": "api-request-shape", "shape": {"tools": [{"name": BASH, "input_schema": {"type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"], "additionalProperties": false}}]}})
}

/// An assistant line of message `message` holding one unparsed Bash call (or, with no `id`, a
/// text block).
fn assistant_line(message: &str, stop_reason: Option<&str>, id: Option<&str>, raw: &str) -> Value {
    let block = match id {
        Some(id) => json!({"type": "tool_use", "id": id, "name": BASH,
            "input": {"__unparsedToolInput": {"raw": raw, "len": raw.encode_utf16().count()}}}),
        None => json!({"type": "text", "text": "done"}),
    };
    json!({"type": "assistant", "sessionId": "s", "message": {"id": message, "role": "assistant",
        "stop_reason": stop_reason, "content": [block]}})
}

/// Calls cut at their message's end (or of no known end) and whole ones, as the CLI records them.
fn stop_reason_transcript() -> (String, Vec<(&'static str, &'static str)>) {
    let cut = r#"{"command": rm -rf /tmp/bu"#;
    let whole = r#"{"command": ls -la}"#;
    let lines = [
        bash_shape(),
        assistant_line("msg_a", Some("max_tokens"), Some("toolu_max"), cut),
        assistant_line(
            "msg_b",
            Some("model_context_window_exceeded"),
            Some("toolu_window"),
            r#"{"command": "ls","timeout": 5"#,
        ),
        assistant_line("msg_c", Some("some_future_reason"), Some("toolu_future"), cut),
        assistant_line("msg_d", None, Some("toolu_later_cut"), cut),
        assistant_line("msg_d", Some("max_tokens"), None, ""),
        assistant_line("msg_e", None, Some("toolu_later_whole"), whole),
        assistant_line("msg_e", Some("tool_use"), None, ""),
        assistant_line("msg_f", None, Some("toolu_unrecorded"), whole),
        assistant_line("msg_g", Some("tool_use"), Some("toolu_whole"), whole),
    ];
    let text = lines.iter().map(|l| format!("{l}\n")).collect();
    // What each path makes of each call: `repair` reads line by line and sees only the call's own
    // line; the others fall back to a later line of the same message.
    let expected = vec![
        ("toolu_max", "refused"),
        ("toolu_window", "refused"),
        ("toolu_future", "refused"),
        ("toolu_later_cut", "refused"),
        ("toolu_later_whole", "repaired"),
        ("toolu_unrecorded", "refused"),
        ("toolu_whole", "repaired"),
    ];
    (text, expected)
}

#[test]
fn a_transcript_call_whose_message_may_be_cut_is_refused_as_truncated_everywhere() {
    let dir = scratch("stop-reasons");
    let (transcript, expected) = stop_reason_transcript();
    let path = dir.join("session.jsonl");
    std::fs::write(&path, &transcript).unwrap();

    // repair: one line at a time, the call's own line only.
    let output = toolmend(&["repair", path.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<Value> =
        String::from_utf8_lossy(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let statuses: Vec<(String, String)> =
        lines.iter().map(|l| (l["id"].as_str().unwrap().into(), l["status"].as_str().unwrap().into())).collect();
    let repair_expected: Vec<(String, String)> = expected
        .iter()
        .map(|(id, status)| (id.to_string(), if *id == "toolu_later_whole" { "refused" } else { status }.to_string()))
        .collect();
    assert_eq!(statuses, repair_expected);
    for line in lines.iter().filter(|l| l["status"] == "refused") {
        assert_eq!(line["reason"]["code"], "truncated", "{line}");
    }
    assert_eq!(lines.last().unwrap()["input"], json!({"command": "ls -la"}));

    // scan: the same counts as the hand count.
    let output = toolmend(&["scan", dir.to_str().unwrap(), "--json"], "");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let bash = &report["tools"][BASH];
    assert_eq!((bash["unparsed"].clone(), bash["repairable"].clone()), (json!(7), json!(2)), "{report}");
    assert_eq!(bash["refused"], json!({"truncated": 5}), "{report}");

    // fix-transcript: only the two whole calls are written back.
    let fixed_path = dir.join("fixed.jsonl");
    let output = toolmend(&["fix-transcript", path.to_str().unwrap(), fixed_path.to_str().unwrap()], "");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let fixed = std::fs::read_to_string(&fixed_path).unwrap();
    let changed: Vec<String> = transcript
        .lines()
        .zip(fixed.lines())
        .filter(|(old, new)| old != new)
        .map(|(_, new)| {
            serde_json::from_str::<Value>(new).unwrap()["message"]["content"][0]["id"].as_str().unwrap().into()
        })
        .collect();
    assert_eq!(changed, ["toolu_later_whole", "toolu_whole"]);

    // The hook: the call looked up by tool_use_id; a cut one gets no corrected input.
    let calls: Vec<Value> = transcript
        .lines()
        .filter_map(|l| {
            let block = serde_json::from_str::<Value>(l).unwrap()["message"]["content"][0].clone();
            (block["type"] == "tool_use")
                .then(|| json!({"tool_name": BASH, "tool_use_id": block["id"], "tool_input": block["input"]}))
        })
        .collect();
    let stdin = json!({"hook_event_name": "PostToolBatch", "transcript_path": path, "tool_calls": calls});
    let output = toolmend(&["hook", "post-tool-batch"], &stdin.to_string());
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let context = printed["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    for (id, status) in &expected {
        let line = context.lines().find(|l| l.contains(&format!("(tool_use_id {id})"))).unwrap();
        match *status {
            "repaired" => assert!(line.contains(r#"The corrected input is: {"command":"ls -la"}"#), "{line}"),
            _ => assert!(line.contains("truncated: ") && !line.contains("corrected input"), "{line}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_transcript_call_without_a_schema_is_refused_by_repair_too() {
    let dir = scratch("no-schema");
    let path = dir.join("session.jsonl");
    let line = assistant_line("msg_a", Some("tool_use"), Some("toolu_1"), r#"{"command": ls, "extra": x}"#);
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let output = toolmend(&["repair", path.to_str().unwrap()], "");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "refused", "{result}");
    assert_eq!(result["reason"]["code"], "unusable_schema", "{result}");
    let _ = std::fs::remove_dir_all(&dir);
}
