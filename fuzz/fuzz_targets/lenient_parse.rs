//! The lenient parser and the whole ladder on arbitrary bytes: never a panic, and a repair
//! always validates against its schema.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

fn schema() -> &'static ToolSchema {
    static SCHEMA: OnceLock<ToolSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        ToolSchema::compile(&serde_json::json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "state": {"type": "string", "enum": ["todo", "done"]},
                "count": {"type": "integer"},
                "either": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
                "nested": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["title"],
            "additionalProperties": false
        }))
        .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for schema in [Some(schema()), None] {
        let outcome = repair(text, schema, &RepairOptions::default());
        if let (Status::Repaired, Some(schema), Some(input)) = (outcome.status, schema, &outcome.input) {
            assert!(schema.first_violation(input).is_none(), "{text:?} -> {input}");
        }
    }
});
