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
        "Here is the call:\n```json\n{\"command\": \"ls\",}\n```\nThat lists the files.",
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
    let raw = "{\"command\": \"npm test\", \"timeout\": 12";
    let with = |reason: &str| {
        repair(raw, Some(&bash(true)), &RepairOptions { stop_reason: Some(reason.into()), ..RepairOptions::default() })
    };
    for reason in ["max_tokens", "model_context_window_exceeded", "refusal", "a_reason_from_the_future"] {
        let outcome = with(reason);
        assert_refused(&outcome, reason);
        assert_eq!(outcome.reason.unwrap().code, RefusalCode::Truncated);
    }
    for reason in ["tool_use", "end_turn", "stop_sequence", "pause_turn"] {
        assert_eq!(with(reason).input, Some(json!({"command": "npm test", "timeout": 12})), "{reason}");
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
    // Closed, the split reading breaks the schema: the text is the one reading.
    let closed = run(raw, &bash(true));
    assert_eq!(closed.input, Some(json!({"command": "grep -rn \"TODO\": src/"})));
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
