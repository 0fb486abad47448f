//! Differential for the engine's rule: texts whose key-like words are all weak (unquoted names
//! at line starts, undeclared quoted names after a space, comment markers), so a second,
//! independent reading — every key-like word as text — always validates. The engine must then
//! refuse, or hand on exactly that reading: never a split the text did not force.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::sync::OnceLock;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

const PIECES: [&str; 12] = [
    "ls", "deploy", "src/*.py", "\ndescription:", "\ntimeout:", "\nname:", " \"TODO\":", "/*", "*/", "//", "\n", " ",
];

fn schema() -> &'static ToolSchema {
    static SCHEMA: OnceLock<ToolSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        ToolSchema::compile(&json!({
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}, "timeout": {"type": "number"}},
            "required": ["command"],
            "additionalProperties": false
        }))
        .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut text = String::from("go");
    for byte in data.iter().take(24) {
        text.push_str(PIECES[usize::from(*byte) % PIECES.len()]);
    }
    text.push_str(" end");
    let raw = format!("{{\"command\": {text}}}");
    let outcome = repair(&raw, Some(schema()), &RepairOptions { stop_reason: Some("tool_use".into()), ..Default::default() });
    if outcome.status == Status::Repaired {
        let as_text = json!({"command": text.trim_end()});
        assert_eq!(outcome.input, Some(as_text), "{raw:?} split where the all-text reading also validates");
    }
});
