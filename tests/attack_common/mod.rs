//! What the attack tests share: Claude Code's tool schemas as the reviews used them, one
//! repair call, and the two checks every finding comes down to.
#![allow(dead_code)]

use serde_json::{json, Value};
use toolmend::repair::{repair, Outcome, RepairOptions, Status};
use toolmend::schema::ToolSchema;

pub fn schema(properties: Value, required: &[&str], closed: bool) -> ToolSchema {
    let mut schema = json!({"type": "object", "properties": properties, "required": required});
    if closed {
        schema["additionalProperties"] = json!(false);
    }
    ToolSchema::compile(&schema).unwrap()
}

/// A schema that takes no undeclared keys, as every Claude Code tool's.
pub fn closed(properties: Value, required: &[&str]) -> ToolSchema {
    schema(properties, required, true)
}

pub fn bash() -> ToolSchema {
    closed(
        json!({"command": {"type": "string"}, "description": {"type": "string"}, "timeout": {"type": "number"},
               "run_in_background": {"type": "boolean"}, "dangerouslyDisableSandbox": {"type": "boolean"}}),
        &["command"],
    )
}

pub fn edit() -> ToolSchema {
    closed(
        json!({"file_path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"},
               "replace_all": {"type": "boolean", "default": false}}),
        &["file_path", "old_string", "new_string"],
    )
}

pub fn write() -> ToolSchema {
    closed(json!({"file_path": {"type": "string"}, "content": {"type": "string"}}), &["file_path", "content"])
}

/// Claude Code's Grep: some declared names are not identifiers.
pub fn grep() -> ToolSchema {
    closed(
        json!({"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"},
               "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
               "-C": {"type": "number"}, "-i": {"type": "boolean"}, "-n": {"type": "boolean"}}),
        &["pattern"],
    )
}

/// The same names at two levels, as MCP schemas often have.
pub fn nested() -> ToolSchema {
    closed(
        json!({"query": {"type": "string"},
               "options": {"type": "object", "additionalProperties": false,
                           "properties": {"verbose": {"type": "boolean"}, "force": {"type": "boolean"}, "limit": {"type": "integer"}}},
               "force": {"type": "boolean"}, "limit": {"type": "integer"}}),
        &["query"],
    )
}

/// A repair after a block that ended normally.
pub fn run(raw: &str, schema: &ToolSchema) -> Outcome {
    repair(raw, Some(schema), &RepairOptions { stop_reason: Some("tool_use".into()), ..RepairOptions::default() })
}

/// Each input is neither repaired nor passed as valid: it goes through as it came.
pub fn refuses(schema: &ToolSchema, inputs: &[&str]) {
    for raw in inputs {
        let outcome = run(raw, schema);
        assert!(
            !matches!(outcome.status, Status::Repaired | Status::Valid),
            "{raw:?} was handed on: {:?}",
            outcome.input
        );
    }
}

pub fn repairs_to(schema: &ToolSchema, raw: &str, expected: Value) {
    let outcome = run(raw, schema);
    assert_eq!(outcome.input, Some(expected), "{raw:?}: {:?} {:?}", outcome.status, outcome.reason);
}
