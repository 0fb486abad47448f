//! The `toolmend` binary: arguments, output and exit codes.

mod common;

use common::toolmend;
use serde_json::{json, Value};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn schema_file() -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("toolmend-cli-schema-{}.json", std::process::id()));
    std::fs::write(&path, toolmend::demo::seed_tools()[0]["input_schema"].to_string()).unwrap();
    path
}

#[test]
fn repair_with_a_schema_prints_the_repaired_json_or_the_reason() {
    let schema = schema_file();
    let schema = schema.to_str().unwrap();
    let repaired = toolmend(
        &["repair", "--schema", schema],
        r#"{"jurisdiction": "se", "terms": token machine payout percentage}"#,
    );
    assert_eq!(repaired.status.code(), Some(0));
    let value: Value = serde_json::from_slice(&repaired.stdout).unwrap();
    assert_eq!(value, json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));

    let refused = toolmend(&["repair", "--schema", schema], r#"{"jurisdiction": france, "terms": ["x"]}"#);
    assert_eq!(refused.status.code(), Some(1));
    assert!(text(&refused.stderr).contains("schema_mismatch"), "{}", text(&refused.stderr));
    assert!(refused.stdout.is_empty());

    let usage = toolmend(&["repair", "--schema"], "");
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn repair_over_the_corpus_writes_one_line_per_record() {
    let output = toolmend(&["repair", "fixtures/corpus/toolcalls.jsonl"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let lines: Vec<Value> = text(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 42);
    assert_eq!(lines[0]["id"], "seed-report-example");
    assert_eq!(lines[0]["input"], json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));
    for key in ["id", "tool", "status", "input", "edits", "reason"] {
        assert!(lines.iter().all(|l| l.get(key).is_some()), "{key}");
    }
}

#[test]
fn a_malformed_line_is_reported_with_its_number_and_the_run_goes_on() {
    let input = "{\"raw\": \"{\\\"a\\\": b}\"}\n{oops\n{\"raw\": \"{}\"}\n";
    let output = toolmend(&["repair", "-"], input);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(text(&output.stdout).lines().count(), 2);
    assert!(text(&output.stderr).contains("<stdin>:2: not JSON"), "{}", text(&output.stderr));
}

#[test]
fn strict_check_reports_compatible_and_incompatible_tools_with_reasons() {
    let output = toolmend(&["strict-check", "--tools", "fixtures/corpus/toolcalls.jsonl", "--json"], "");
    assert_eq!(output.status.code(), Some(0));
    let report: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let find = |name: &str| report.iter().find(|r| r["tool"] == name).unwrap().clone();
    assert_eq!(find("run")["compatible"], false);
    assert_eq!(find("run")["reason"], "additionalProperties other than false");
    assert_eq!(find("run")["pointer"], "/properties/env/additionalProperties");
    let search = find("search");
    assert_eq!(search["compatible"], true);
    assert_eq!(search["schema"]["properties"]["limit"]["description"], "{\"minimum\":1}");
    assert_eq!(search["schema"]["additionalProperties"], false);
}

#[test]
fn demo_shows_the_repaired_call_and_the_metric() {
    let output = toolmend(&["demo"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(shown.contains(r#"{"jurisdiction":"se","terms":["token machine payout percentage"]}"#), "{shown}");
    assert!(shown.contains(r#"toolmend_tool_calls_total{tool="search",outcome="repaired"} 1"#), "{shown}");
    assert!(shown.contains("bare_list"));
}

#[test]
fn repair_takes_schemas_from_a_tools_file_for_records_that_carry_none() {
    let tools = std::env::temp_dir().join(format!("toolmend-cli-tools-{}.json", std::process::id()));
    std::fs::write(
        &tools,
        json!({"tools": [{"name": "search", "inputSchema": toolmend::demo::seed_tools()[0]["input_schema"]}]})
            .to_string(),
    )
    .unwrap();
    let record =
        json!({"id": "x", "tool": "search", "raw": r#"{"jurisdiction": "se", "terms": token machine}"#}).to_string();
    let with_tools = toolmend(&["repair", "--tools", tools.to_str().unwrap(), "-"], &record);
    let line: Value = serde_json::from_slice(&with_tools.stdout).unwrap();
    assert_eq!(
        line["input"],
        json!({"jurisdiction": "se", "terms": ["token machine"]}),
        "the array the schema asks for"
    );
    let unnamed = json!({"id": "x", "raw": r#"{"jurisdiction": "se", "terms": token machine}"#}).to_string();
    let generic = toolmend(&["repair", "-"], &unnamed);
    let line: Value = serde_json::from_slice(&generic.stdout).unwrap();
    assert_eq!(line["input"], json!({"jurisdiction": "se", "terms": "token machine"}), "generic mode: a string");
    let named = toolmend(&["repair", "-"], &record);
    let line: Value = serde_json::from_slice(&named.stdout).unwrap();
    assert_eq!(line["status"], "refused", "a named tool without its schema is not checked: {line}");
    assert_eq!(line["reason"]["code"], "unusable_schema");
    let _ = std::fs::remove_file(&tools);
}

#[test]
fn a_capture_line_with_no_schema_or_no_stop_reason_is_refused() {
    let schema = toolmend::demo::seed_tools()[0]["input_schema"].clone();
    let raw = r#"{"jurisdiction": "se", "terms": token machine}"#;
    let capture = |schema: &Value, stop_reason: Value| {
        json!({"id": "c", "tool": "search", "schema": schema, "raw": raw, "stop_reason": stop_reason,
            "request_id": "req_1", "status": "refused", "input": null, "edits": [], "reason": null})
        .to_string()
    };
    let results = |input: String| -> Vec<Value> {
        let output = toolmend(&["repair", "-"], &input);
        text(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let lines = results(
        [capture(&schema, json!("tool_use")), capture(&Value::Null, json!("tool_use")), capture(&schema, Value::Null)]
            .join("\n"),
    );
    let outcomes: Vec<(&str, &str)> =
        lines.iter().map(|l| (l["status"].as_str().unwrap(), l["reason"]["code"].as_str().unwrap_or("-"))).collect();
    assert_eq!(outcomes, [("repaired", "-"), ("refused", "unusable_schema"), ("refused", "truncated")]);
    // A plain record with no stop reason: none is known, the call is repaired.
    let record = json!({"id": "r", "tool": "search", "schema": schema, "raw": raw}).to_string();
    assert_eq!(results(record)[0]["status"], "repaired");
}

#[test]
fn a_valid_input_comes_out_as_its_own_text() {
    let schema = std::env::temp_dir().join(format!("toolmend-cli-bash-{}.json", std::process::id()));
    let bash = json!({"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        "required": ["command"]});
    std::fs::write(&schema, bash.to_string()).unwrap();
    let raw = "{\"command\": \"echo caf\\u00e9 \\/tmp\",\n \"timeout\": 1E3}";
    for input in [format!("\u{feff}{raw}\n"), raw.to_string()] {
        let output = toolmend(&["repair", "--schema", schema.to_str().unwrap()], &input);
        assert_eq!(output.status.code(), Some(0), "{input:?}: {}", text(&output.stderr));
        assert_eq!(text(&output.stdout), format!("{raw}\n"), "{input:?}: byte for byte, minus the BOM");
    }
    let record = json!({"id": "v", "schema": bash, "raw": raw, "stop_reason": "tool_use"}).to_string();
    let output = toolmend(&["repair", "-"], &record);
    let line = text(&output.stdout);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains(r#""input":{"command": "echo caf\u00e9 \/tmp",  "timeout": 1E3}"#), "{line}");
    let _ = std::fs::remove_file(&schema);
}

#[test]
fn a_reader_that_stops_early_ends_the_output_without_a_panic_message() {
    use std::io::{BufRead, BufReader};
    let big = std::env::temp_dir().join(format!("toolmend-cli-pipe-{}.jsonl", std::process::id()));
    let corpus = std::fs::read_to_string("fixtures/corpus/toolcalls.jsonl").unwrap();
    std::fs::write(&big, corpus.repeat(500)).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["repair", big.to_str().unwrap()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(first.contains("seed-report-example"));
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
    assert_eq!(output.status.code(), Some(0));
    let _ = std::fs::remove_file(&big);
}
