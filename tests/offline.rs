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
            "broken.jsonl:null \"not UTF-8: skipped\"",
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
