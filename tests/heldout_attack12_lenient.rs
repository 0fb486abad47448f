//! Attack round 12 on the lenient parser (fixtures/heldout/attack12_lenient.jsonl): another
//! language's separator after a key (`=>`, `->`, ` = `, `:=`), backticks or other languages'
//! literal syntax around a bare value, cut-at-end shapes the old guards let through, a code
//! block's `}` taken for a stray closer, whitespace at a bare value's edges, a written-out
//! escape at a value's start, doubled or ornament quotes, escape dialect mixes. Each has two
//! readings: all are refused. The controls beside them still repair.

mod grading;

use grading::grade_file;
use serde_json::{json, Value};
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[test]
fn attack12_lenient_cases_have_no_wrong_repairs_and_none_missed() {
    let report = grade_file(include_str!("../fixtures/heldout/attack12_lenient.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 28);
}

/// Each family's refusal names its own reason, so a refusal for some other cause (a parse
/// that fails anyway) would not pass for the mechanism.
#[test]
fn each_family_is_refused_for_its_own_reason() {
    let cases = [
        ("sep-arrow-1", "another separator"),
        ("sep-equals-1", "another separator"),
        ("sep-arrow-2", "another separator"),
        ("sep-walrus-1", "another separator"),
        ("backtick-bash-1", "backticks"),
        ("backtick-write-1", "backticks"),
        ("backtick-path-1", "backticks"),
        ("unclosed-multiline-ws-1", "runs over several lines"),
        ("unclosed-multiline-ws-2", "runs over several lines"),
        ("cut-key-prefix-at-end-1", "part of a key"),
        ("cut-number-at-end-1", "inside a number"),
        ("js-regex-literal-1", "regex literal"),
        ("js-regex-literal-2", "regex literal"),
        ("py-constructor-1", "constructor call"),
        ("yaml-block-scalar-1", "block scalar"),
        ("yaml-block-scalar-2", "block scalar"),
        ("heredoc-as-value-1", "heredoc"),
        ("literal-escape-at-value-1", "at the start of unquoted text"),
        ("sq-doubled-edge-1", "doubled"),
        ("ornament-quote-1", "typographic"),
        ("esc-json5-v-1", "escape nothing"),
        ("esc-json5-sq-1", "escape nothing"),
        ("esc-sq-backspace-1", "single-quoted"),
    ];
    let by_id: Vec<Value> = include_str!("../fixtures/heldout/attack12_lenient.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for (id, reason) in cases {
        let case = by_id.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id} in the file"));
        let schema = ToolSchema::compile(&case["schema"]).unwrap();
        let outcome = repair(case["raw"].as_str().unwrap(), Some(&schema), &RepairOptions::default());
        let message = outcome.reason.as_ref().map(|r| r.message.clone()).unwrap_or_default();
        assert_eq!(outcome.status, Status::Refused, "{id}");
        assert!(message.contains(reason), "{id}: {message}");
    }
}

fn schema(properties: Value) -> ToolSchema {
    let required: Vec<&String> = properties.as_object().unwrap().keys().take(1).collect();
    ToolSchema::compile(&json!({"type": "object", "properties": properties, "required": required,
                                "additionalProperties": false}))
    .unwrap()
}

fn repaired(schema: &ToolSchema, raw: &str) -> Option<Value> {
    let outcome = repair(raw, Some(schema), &RepairOptions::default());
    assert_ne!(outcome.status, Status::Refused, "{raw:?}: {:?}", outcome.reason);
    outcome.input
}

/// What the mechanisms above must leave alone: one blank after the colon, a pretty-printed
/// object's own line breaks, a path between slashes, a backtick inside a value, a call that
/// is code, a heredoc inside a command, a number or a closer that ends the input closed.
#[test]
fn the_controls_beside_them_still_repair() {
    let bash = schema(json!({"command": {"type": "string"}, "timeout": {"type": "integer"}}));
    let path = schema(json!({"file_path": {"type": "string"}, "content": {"type": "string"}}));
    let cases = [
        (&bash, "{\"command\": ls -la}", json!({"command": "ls -la"})),
        (&bash, "{\n  \"command\": ls -la\n}", json!({"command": "ls -la"})),
        (&bash, "{command: echo `date`}", json!({"command": "echo `date`"})),
        (&bash, "{\"command\": npm test, \"timeout\": 600000}", json!({"command": "npm test", "timeout": 600000})),
        (&bash, "{\"command\": \"make\", \"timeout\": 5}", json!({"command": "make", "timeout": 5})),
        (&bash, "{\"command\": cat <<EOF\nhi\nEOF}", json!({"command": "cat <<EOF\nhi\nEOF"})),
        (&path, "{\"file_path\": /tmp/, \"content\": x}", json!({"file_path": "/tmp/", "content": "x"})),
        (
            &path,
            "{\"file_path\": a.py, \"content\": print('hi')}",
            json!({"file_path": "a.py", "content": "print('hi')"}),
        ),
        (&path, "{'file_path': 'a.md', 'content': 'it\\'s'}", json!({"file_path": "a.md", "content": "it's"})),
    ];
    for (schema, raw, expected) in cases {
        assert_eq!(repaired(schema, raw), Some(expected), "{raw:?}");
    }
}
