//! The wrong repairs found on realistic text (issue "never invent, never lose"): each input is
//! refused, or read the one way that fits — never the tempting wrong way.

use serde_json::{json, Value};
use toolmend::repair::{repair, Outcome, RefusalCode, RepairOptions, Status};
use toolmend::schema::ToolSchema;

/// Claude Code's own Bash tool schema.
fn bash(closed: bool) -> ToolSchema {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "description": {"type": "string"},
            "timeout": {"type": "number"},
            "run_in_background": {"type": "boolean"},
            "dangerouslyDisableSandbox": {"type": "boolean"}
        },
        "required": ["command"]
    });
    if closed {
        schema["additionalProperties"] = json!(false);
    }
    ToolSchema::compile(&schema).unwrap()
}

fn glob() -> ToolSchema {
    ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
        "required": ["pattern"],
        "additionalProperties": false
    }))
    .unwrap()
}

fn run(raw: &str, schema: &ToolSchema) -> Outcome {
    repair(raw, Some(schema), &RepairOptions { stop_reason: Some("tool_use".into()), ..RepairOptions::default() })
}

fn assert_refused(outcome: &Outcome, raw: &str) {
    assert_eq!(outcome.status, Status::Refused, "{raw:?} was handed on as {:?}", outcome.input);
}

#[test]
fn a_key_like_word_inside_a_heredoc_is_text_or_refused() {
    let raw = "{\"command\": cat > SKILL.md <<EOF\n---\nname: deploy\ndescription: Deploy the app\n---\nRun make deploy.\nEOF\n}";
    let outcome = run(raw, &bash(true));
    // `command` cut at the line and the rest as `description` validates, and so does the whole
    // text as `command`: two readings.
    assert_refused(&outcome, raw);
    assert_eq!(outcome.reason.unwrap().code, RefusalCode::Ambiguous);
}

#[test]
fn a_sandbox_flag_inside_a_heredoc_never_becomes_the_real_flag() {
    let command = "cat > notes.md <<EOF\n---\ndangerouslyDisableSandbox: true\n---\nEOF";
    let raw = format!("{{\"command\": {command}\n}}");
    let outcome = run(&raw, &bash(true));
    if outcome.status == Status::Repaired {
        assert_eq!(outcome.input, Some(json!({ "command": command })));
    } else {
        assert_refused(&outcome, &raw);
    }
}

#[test]
fn a_comment_marker_at_the_start_of_a_glob_is_not_dropped() {
    let raw = "{\"pattern\": /*/src/*.py, \"path\": */tmp}";
    let outcome = run(raw, &glob());
    if outcome.status == Status::Repaired {
        assert_eq!(outcome.input, Some(json!({"pattern": "/*/src/*.py", "path": "*/tmp"})));
    }
    assert_ne!(outcome.input, Some(json!({"pattern": "tmp"})));
    // Read as a comment, `pattern` is `tmp`; read as text, it is the glob: both fit.
    assert_refused(&outcome, raw);
}

#[test]
fn a_comment_that_only_reads_one_way_is_still_dropped() {
    let schema = ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}},
        "required": ["limit"],
        "additionalProperties": false
    }))
    .unwrap();
    let outcome = run("{\"limit\": /* at most */ 5, query: 'x'}", &schema);
    assert_eq!(outcome.status, Status::Repaired, "{:?}", outcome.reason);
    assert_eq!(outcome.input, Some(json!({"limit": 5, "query": "x"})));
}

#[test]
fn command_text_around_the_object_refuses() {
    for raw in [
        "cd /tmp && {\"command\": \"rm -rf build\"}",
        "{\"command\": \"git push\"} --force",
        "{\"command\": \"git push\"} origin main",
        "sudo {\"command\": \"rm -rf build\"",
    ] {
        assert_refused(&run(raw, &bash(true)), raw);
    }
}

#[test]
fn recognized_wrappers_around_the_object_are_still_dropped() {
    let expected = json!({"command": "ls"});
    for raw in [
        "```json\n{\"command\": \"ls\",}\n```",
        "Here is the call:\n```json\n{\"command\": \"ls\",}\n```\nThat is the call.",
        "Running: {\"command\": \"ls\",} now.",
        "Bash({\"command\": \"ls\",})",
        "{\"command\": \"ls\",}</parameter>\n</invoke>",
        "<|tool_call_begin|>{\"command\": \"ls\",}<|tool_call_end|>",
    ] {
        let outcome = run(raw, &bash(true));
        assert_eq!(outcome.input.as_ref(), Some(&expected), "{raw:?}: {:?}", outcome.reason);
    }
}

#[test]
fn only_a_normal_end_of_the_block_lets_a_repair_through() {
    // The input ends after a closed string: a number there could go on (`12` of `120000`) and
    // refuses at any end of the block.
    let raw = "{\"command\": \"npm test\", \"timeout\": 12, \"description\": \"run\"";
    let with = |reason: &str| {
        repair(raw, Some(&bash(true)), &RepairOptions { stop_reason: Some(reason.into()), ..RepairOptions::default() })
    };
    for reason in
        ["max_tokens", "model_context_window_exceeded", "refusal", "stop_sequence", "a_reason_from_the_future"]
    {
        let outcome = with(reason);
        assert_refused(&outcome, reason);
        assert_eq!(outcome.reason.unwrap().code, RefusalCode::Truncated);
    }
    for reason in ["tool_use", "end_turn", "pause_turn"] {
        let expected = json!({"command": "npm test", "timeout": 12, "description": "run"});
        assert_eq!(with(reason).input, Some(expected), "{reason}");
        let cut_in_a_number = repair(
            "{\"command\": \"npm test\", \"timeout\": 12",
            Some(&bash(true)),
            &RepairOptions { stop_reason: Some(reason.into()), ..RepairOptions::default() },
        );
        assert_eq!(cut_in_a_number.reason.map(|r| r.code), Some(RefusalCode::Truncated), "{reason}");
    }
}

#[test]
fn python_literals_never_become_strings() {
    let read = ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}, "depth": {"type": ["integer", "null"]}},
        "required": ["path"],
        "additionalProperties": false
    }))
    .unwrap();
    for raw in ["{\"path\": None}", "{\"path\": True}", "{\"path\": False,}", "{'path': None}"] {
        assert_refused(&run(raw, &read), raw);
    }
    let outcome = run("{'path': 'a', 'recursive': True, 'depth': None}", &read);
    assert_eq!(outcome.input, Some(json!({"path": "a", "recursive": true, "depth": null})));
}

#[test]
fn in_an_open_schema_a_quoted_word_inside_bare_text_is_two_readings() {
    let raw = "{\"command\": grep -rn \"TODO\": src/}";
    let open = run(raw, &bash(false));
    assert_refused(&open, raw);
    // Closed, the split reading breaks the schema with that very key: the model may have meant
    // a member the tool does not take, so the text reading is in doubt too.
    let closed = run(raw, &bash(true));
    assert_refused(&closed, raw);
}

#[test]
fn numbers_no_edit_touched_keep_their_text() {
    let schema = ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "scale": {"type": "number"}, "ratio": {"type": "number"}, "name": {"type": "string"}},
        "additionalProperties": false
    }))
    .unwrap();
    let outcome =
        run("{\"id\": 123456789012345678901234, \"scale\": 1e3, \"ratio\": 0.10, \"name\": bare words}", &schema);
    assert_eq!(outcome.status, Status::Repaired, "{:?}", outcome.reason);
    let text = outcome.input.unwrap().to_string();
    assert_eq!(text, r#"{"id":123456789012345678901234,"scale":1e3,"ratio":0.10,"name":"bare words"}"#);
}

#[test]
fn valid_input_is_untouched_whatever_it_holds() {
    let raw = r#"{"command": "cat <<EOF\ndescription: x\nEOF", "timeout": 1e3}"#;
    let outcome = run(raw, &bash(true));
    assert_eq!(outcome.status, Status::Valid);
    assert_eq!(outcome.input.unwrap(), serde_json::from_str::<Value>(raw).unwrap());
}

// The lenient readings of the failure families are where a tempting wrong reading hides.

fn write_tool() -> ToolSchema {
    ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
        "additionalProperties": false
    }))
    .unwrap()
}

fn assert_never(outcome: &Outcome, raw: &str, forbidden: &Value) {
    assert_ne!(outcome.input.as_ref(), Some(forbidden), "{raw:?} handed on the tempting wrong reading");
}

#[test]
fn tag_like_text_inside_a_shell_command_is_not_foreign_syntax() {
    let raw = "{\"command\": grep -n '<parameter name=\"description\">' src/}";
    let outcome = run(raw, &bash(true));
    if outcome.status == Status::Repaired {
        assert_eq!(outcome.input, Some(json!({"command": "grep -n '<parameter name=\"description\">' src/"})));
    }
    let raw = "<parameter name=\"command\">echo '</parameter>'</parameter>";
    assert_refused(&run(raw, &bash(true)), raw);
}

#[test]
fn foreign_parameters_must_be_declared_and_whole() {
    for raw in [
        "<parameter name=\"cmd\">ls</parameter>",
        "<parameter name=\"command\">rm -rf build && mak",
        "<parameter=command>ls</parameter>\n<parameter=command>rm -rf /</parameter>",
        "<arg_key>command</arg_key>",
        "cd /tmp\n<parameter name=\"command\">ls</parameter>",
    ] {
        assert_refused(&run(raw, &bash(true)), raw);
    }
}

#[test]
fn a_foreign_value_that_reads_two_ways_is_refused() {
    let schema = ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"body": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}},
        "required": ["body"],
        "additionalProperties": false
    }))
    .unwrap();
    let raw = "<parameter name=\"body\">[\"a\", \"b\"]</parameter>";
    assert_refused(&run(raw, &schema), raw);
}

#[test]
fn a_damaged_key_inside_bare_text_is_a_weak_reading() {
    let raw = "{\"command\": echo description\": hi}";
    let outcome = run(raw, &bash(true));
    assert_never(&outcome, raw, &json!({"command": "echo", "description": "hi"}));
    // An undeclared name is never repaired into a key.
    let raw = "{\"command\":\"ls\",descr\":\"x\"}";
    assert_refused(&run(raw, &bash(true)), raw);
}

#[test]
fn a_lost_opening_still_has_to_validate() {
    let raw = "description\": \"x && rm -rf /\"}";
    assert_refused(&run(raw, &bash(true)), raw);
}

#[test]
fn a_restarted_object_with_a_different_copy_is_refused() {
    let raw = "{\"command\":\"ls\",\"description\":\"list\"{\"command\": \"rm -rf /tmp/x\", \"description\": \"list\"}";
    assert_refused(&run(raw, &bash(true)), raw);
}

#[test]
fn a_literal_escape_where_a_path_starts_is_two_readings() {
    let raw = "{\"file_path\": \\new\\notes.txt, \"content\": \"hi\"}";
    let outcome = run(raw, &write_tool());
    assert_never(&outcome, raw, &json!({"file_path": "ew\\notes.txt", "content": "hi"}));
}

#[test]
fn whitespace_only_input_is_empty_only_where_the_tool_takes_nothing() {
    assert_refused(&run(" \n ", &bash(true)), "whitespace");
    let nothing = ToolSchema::compile(&json!({"type": "object", "properties": {}})).unwrap();
    assert_eq!(run(" \n ", &nothing).input, Some(json!({})));
}

#[test]
fn an_envelope_is_unwrapped_only_for_its_own_tool_where_the_schema_does_not_declare_it() {
    let raw = r#"{"name": "Bash", "parameters": {"command": "ls"}}"#;
    let as_tool = |tool: &str| RepairOptions {
        stop_reason: Some("tool_use".into()),
        tool: Some(tool.into()),
        ..RepairOptions::default()
    };
    assert_eq!(repair(raw, Some(&bash(true)), &as_tool("Bash")).input, Some(json!({"command": "ls"})));
    assert_eq!(repair(raw, Some(&bash(true)), &as_tool("Grep")).status, Status::Invalid);
    assert_eq!(run(raw, &bash(true)).status, Status::Invalid, "no tool name: no envelope");
    let named = ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "parameters": {"type": "object"}},
        "required": ["name"]
    }))
    .unwrap();
    assert_eq!(run(raw, &named).status, Status::Valid);
}

#[test]
fn json_that_breaks_the_schema_is_coerced_only_losslessly() {
    let read = ToolSchema::compile(&json!({
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "offset": {"type": "integer"}, "all": {"type": "boolean"}},
        "required": ["file_path"],
        "additionalProperties": false
    }))
    .unwrap();
    let coerced = run(r#"{"file_path": "/a", "offset": "120", "all": "true"}"#, &read);
    assert_eq!(coerced.input, Some(json!({"file_path": "/a", "offset": 120, "all": true})));
    for raw in
        [r#"{"file_path": "/a", "offset": "12 0"}"#, r#"{"file_path": "/a", "offset": "ten"}"#, r#"{"file_path": 5}"#]
    {
        let outcome = run(raw, &read);
        assert_eq!(outcome.status, Status::Invalid, "{raw}");
        assert_eq!(outcome.input, Some(serde_json::from_str::<Value>(raw).unwrap()));
    }
    // A cut block is never coerced.
    let cut = repair(
        r#"{"file_path": "/a", "offset": "120"}"#,
        Some(&read),
        &RepairOptions { stop_reason: Some("max_tokens".into()), ..RepairOptions::default() },
    );
    assert_eq!(cut.status, Status::Invalid);
}
