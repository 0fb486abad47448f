//! The round-9 held-out set's wrong repairs and wrapper losses (/work/eval9): a `\\` beside
//! backslashes that escape nothing, JavaScript's `undefined`, the layout line breaks of a
//! foreign value, foreign tags leaked into a JSON string; and the wrappers and envelopes a
//! repair may take off.

mod attack_common;

use attack_common::*;
use serde_json::{json, Value};
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

fn read_file() -> ToolSchema {
    schema(json!({"path": {"type": "string"}}), &["path"], false)
}

/// An update tool, as FastMCP writes it: `null` clears the estimate, no member leaves it.
fn update_issue() -> ToolSchema {
    schema(
        json!({"id": {"type": "string"},
               "estimate": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
               "labels": {"type": "array", "items": {"type": "string"}}}),
        &["id"],
        false,
    )
}

/// A repair of a call to the tool `tool`, after a block that ended normally.
fn repairs_call_to(tool: &str, schema: &ToolSchema, raw: &str, expected: Value) {
    let options =
        RepairOptions { stop_reason: Some("tool_use".into()), tool: Some(tool.into()), ..RepairOptions::default() };
    let outcome = repair(raw, Some(schema), &options);
    assert_eq!(outcome.input, Some(expected), "{raw:?}: {:?} {:?}", outcome.status, outcome.reason);
}

fn refuses_call_to(tool: &str, schema: &ToolSchema, inputs: &[&str]) {
    let options =
        RepairOptions { stop_reason: Some("tool_use".into()), tool: Some(tool.into()), ..RepairOptions::default() };
    for raw in inputs {
        let outcome = repair(raw, Some(schema), &options);
        let handed_on = matches!(outcome.status, Status::Repaired | Status::Valid);
        assert!(!handed_on, "{raw:?} was handed on: {:?}", outcome.input);
    }
}

#[test]
fn a_json_escaped_backslash_beside_backslashes_that_escape_nothing_is_two_readings() {
    // `\\` decoded gives one path, every backslash kept gives another: both are guesses.
    refuses(
        &read_file(),
        &[
            r#"{"path": "\\fileserver\share\q3.xlsx"}"#,
            r#"{"path": "\\nas01\backups\db.sql"}"#,
            r#"{"path": "C:\\Users\me\q.txt"}"#,
            r#"{"path": "\share\\q3.xlsx"}"#,
        ],
    );
    refuses(&grep(), &[r#"{"pattern": "\\s+\d+", "-n": true}"#, r#"{"pattern": "\d+\\.\d+"}"#]);
    // Only backslashes that escape nothing: one reading, kept as written.
    repairs_to(&read_file(), r#"{"path": "\share\q3.xlsx"}"#, json!({"path": "\\share\\q3.xlsx"}));
    repairs_to(&grep(), r#"{"pattern": "\d+\s"}"#, json!({"pattern": "\\d+\\s"}));
    // Only JSON escapes: one reading, decoded.
    repairs_to(&read_file(), r#"{"path": "\\\\srv\\x",}"#, json!({"path": "\\\\srv\\x"}));
}

#[test]
fn javascript_undefined_is_no_member_never_null() {
    // Where null means something (clear the estimate), `undefined` may mean it or "not sent".
    refuses(
        &update_issue(),
        &[
            r#"{id: "ENG-1", estimate: undefined}"#,
            r#"{"id": "ENG-1", "estimate": undefined}"#,
            r#"{id: "ENG-1", extra: undefined}"#,
            r#"{id: "ENG-1", labels: ["a", undefined]}"#,
        ],
    );
    // A required member `undefined` is a member missing.
    refuses(&bash(), &[r#"{command: undefined}"#, r#"{"command": undefined, "description": "x"}"#]);
    // Where null is no value the member may take, `undefined` is the member not sent.
    repairs_to(&bash(), r#"{command: "ls", timeout: undefined}"#, json!({"command": "ls"}));
    repairs_to(
        &bash(),
        r#"{"command": "ls", "run_in_background": undefined, "description": "List"}"#,
        json!({"command": "ls", "description": "List"}),
    );
    // Python's literals still mean what they say.
    repairs_to(
        &bash(),
        r#"{"command": "ls", "run_in_background": True}"#,
        json!({"command": "ls", "run_in_background": true}),
    );
}

#[test]
fn a_foreign_value_loses_its_layout_line_breaks_only_in_pairs() {
    // No line break after the opening tag: the one before the closing tag is the file's.
    repairs_to(
        &write(),
        "<parameter name=\"file_path\">/cfg/pom.xml</parameter><parameter name=\"content\"><project>\n  <modelVersion>4.0.0</modelVersion>\n</project>\n</parameter>",
        json!({"file_path": "/cfg/pom.xml", "content": "<project>\n  <modelVersion>4.0.0</modelVersion>\n</project>\n"}),
    );
    repairs_to(
        &write(),
        "<parameter=file_path>/a.txt</parameter>\n<parameter=content>hello\n</parameter>",
        json!({"file_path": "/a.txt", "content": "hello\n"}),
    );
    repairs_to(
        &write(),
        "<arg_key>file_path</arg_key><arg_value>/a.txt</arg_value><arg_key>content</arg_key><arg_value>x\r\n</arg_value>",
        json!({"file_path": "/a.txt", "content": "x\r\n"}),
    );
    repairs_to(
        &write(),
        "<parameter=file_path>/a.txt</parameter>\n<parameter=content>\n\nhello</parameter>",
        json!({"file_path": "/a.txt", "content": "\n\nhello"}),
    );
    // One on either side: the syntax's layout (Qwen's), taken off as a pair.
    repairs_to(
        &write(),
        "<function=Write>\n<parameter=file_path>\n/a.txt\n</parameter>\n<parameter=content>\nhello\n\n</parameter>\n</function>",
        json!({"file_path": "/a.txt", "content": "hello\n"}),
    );
}

#[test]
fn foreign_tags_naming_a_declared_key_inside_a_repaired_string_are_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": \"npm test</parameter>\n<parameter name=\"description\">Run the test suite\"}",
            "{\"command\": \"npm test</parameter>\n<parameter=description>\nRun the tests\n</parameter>\"}",
            "{\"command\": \"ls\n<arg_key>description</arg_key><arg_value>List</arg_value>\"}",
            "{\"command\": npm test</parameter>\n<parameter name=\"timeout\">60000}",
            "{'command': 'make</parameter><parameter name=\"run_in_background\">true'}",
        ],
    );
    // Tags naming no declared key are the value's text (an XML file, a template).
    repairs_to(
        &write(),
        "{\"file_path\": \"/t.xml\", \"content\": \"<parameter name=\"size\">1</parameter>\n\"}",
        json!({"file_path": "/t.xml", "content": "<parameter name=\"size\">1</parameter>\n"}),
    );
    // Valid JSON is never second-guessed.
    let valid = r#"{"command": "echo '<parameter name=\"description\">x</parameter>'"}"#;
    repairs_to(
        &bash(),
        &format!("{valid} "),
        json!({"command": "echo '<parameter name=\"description\">x</parameter>'"}),
    );
}

#[test]
fn mistral_writes_the_tool_name_glued_to_its_marker() {
    let expected = json!({"command": "cargo fmt --check"});
    for raw in [
        "[TOOL_CALLS]Bash[ARGS]{\"command\": \"cargo fmt --check\"}",
        "[TOOL_CALLS]Bash{\"command\": \"cargo fmt --check\"}",
        "[TOOL_CALLS]Bash[ARGS]{\"command\": cargo fmt --check}",
        "[TOOL_CALLS] {\"command\": \"cargo fmt --check\"}",
    ] {
        repairs_call_to("Bash", &bash(), raw, expected.clone());
    }
    // A name glued to the marker is the call's: another tool's is not this call.
    refuses_call_to(
        "Bash",
        &bash(),
        &[
            "[TOOL_CALLS]Grep[ARGS]{\"command\": \"cargo fmt --check\"}",
            "[TOOL_CALLS]Grep{\"command\": \"ls\"}",
            "[TOOL_CALLS]rm -rf {\"command\": \"ls\"}",
        ],
    );
}

#[test]
fn a_call_envelope_for_this_tool_may_give_its_input_as_input_or_as_a_json_string() {
    let pattern = json!({"pattern": "TODO", "output_mode": "count"});
    for raw in [
        r#"{"name": "Grep", "input": {"pattern": "TODO", "output_mode": "count"}}"#,
        r#"{"type": "tool_use", "name": "Grep", "input": {"pattern": "TODO", "output_mode": "count"}}"#,
        r#"{"name": "Grep", "arguments": "{\"pattern\": \"TODO\", \"output_mode\": \"count\"}"}"#,
        "<tool_call>\n{\"name\": \"Grep\", \"arguments\": \"{\\\"pattern\\\": \\\"TODO\\\", \\\"output_mode\\\": \\\"count\\\"}\"}\n</tool_call>",
    ] {
        repairs_call_to("Grep", &grep(), raw, pattern.clone());
    }
    refuses_call_to(
        "Grep",
        &grep(),
        &[
            // Another tool's call, two inputs, a key given twice, a string that is no object.
            r#"{"name": "Glob", "input": {"pattern": "TODO"}}"#,
            r#"{"name": "Grep", "input": {"pattern": "a"}, "arguments": {"pattern": "b"}}"#,
            r#"{"name": "Grep", "arguments": "{\"pattern\": \"a\", \"pattern\": \"b\"}"}"#,
            r#"{"name": "Grep", "arguments": "TODO"}"#,
            "<tool_call>\n{\"name\": \"Glob\", \"arguments\": \"{\\\"pattern\\\": \\\"TODO\\\"}\"}\n</tool_call>",
        ],
    );
}

#[test]
fn glm_writes_the_tool_name_as_text_after_its_envelope() {
    repairs_call_to(
        "Grep",
        &grep(),
        "<tool_call>Grep\n<arg_key>pattern</arg_key>\n<arg_value>useEffect</arg_value>\n<arg_key>glob</arg_key>\n<arg_value>*.tsx</arg_value>\n</tool_call>",
        json!({"pattern": "useEffect", "glob": "*.tsx"}),
    );
    refuses_call_to(
        "Grep",
        &grep(),
        &[
            "<tool_call>Glob\n<arg_key>pattern</arg_key>\n<arg_value>*.tsx</arg_value>\n</tool_call>",
            "<tool_call>Grep now\n<arg_key>pattern</arg_key>\n<arg_value>x</arg_value>\n</tool_call>",
            "<tool_call>Grep\n<arg_key>pattern</arg_key>\n<arg_value>x</arg_value>\nGrep\n</tool_call>",
        ],
    );
}

#[test]
fn mistral_lists_its_calls_and_one_call_in_the_list_is_read() {
    repairs_call_to(
        "Bash",
        &bash(),
        "[TOOL_CALLS] [{\"name\": \"Bash\", \"arguments\": {\"command\": \"cargo clippy\"}}]",
        json!({"command": "cargo clippy"}),
    );
    repairs_call_to(
        "Bash",
        &bash(),
        "[TOOL_CALLS][{\"name\": \"Bash\", \"arguments\": {\"command\": \"ls\"}}]",
        json!({"command": "ls"}),
    );
    refuses_call_to(
        "Bash",
        &bash(),
        &[
            // Two calls, or another tool's.
            "[TOOL_CALLS] [{\"name\": \"Bash\", \"arguments\": {\"command\": \"ls\"}}, {\"name\": \"Bash\", \"arguments\": {\"command\": \"pwd\"}}]",
            "[TOOL_CALLS] [{\"name\": \"Grep\", \"arguments\": {\"command\": \"ls\"}}]",
            "[TOOL_CALLS]Bash [{\"command\": \"ls\"}]",
        ],
    );
}

#[test]
fn a_lead_in_may_name_the_tool_by_the_words_of_its_name() {
    let weather = schema(json!({"city": {"type": "string"}, "days": {"type": "integer"}}), &["city"], false);
    let expected = json!({"city": "Hanoi", "days": 2});
    let fenced = "\n```json\n{\"city\": \"Hanoi\", \"days\": 2}\n```";
    for lead in ["Calling the weather tool:", "Using the forecast tool:", "Let me use Forecast:"] {
        repairs_call_to("mcp__weather__forecast", &weather, &format!("{lead}{fenced}"), expected.clone());
    }
    repairs_call_to(
        "Read",
        &closed(json!({"file_path": {"type": "string"}}), &["file_path"]),
        "Let me read it now:\n```json\n{\"file_path\": \"/app/config.ts\"}\n```",
        json!({"file_path": "/app/config.ts"}),
    );
    // Words that are not the tool's may say where or how it runs.
    refuses_call_to(
        "mcp__weather__forecast",
        &weather,
        &[&format!("Calling the weather tool for tomorrow:{fenced}"), &format!("In the staging weather tool:{fenced}")],
    );
}
