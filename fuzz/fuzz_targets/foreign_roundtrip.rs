//! Foreign call syntax, written from a known input: `<parameter name="K">V</parameter>` for
//! string values drawn from tag-like, quote-like and line-break pieces. A repair must give back
//! exactly the input the parameters spelled; anything the text cannot say for sure is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

const KEYS: [&str; 3] = ["command", "description", "path"];
const PIECES: [&str; 12] =
    ["ls", " ", "\n", "<", ">", "</", "parameter", "\"", "=", "echo hi", "/tmp/*", "{\"a\": 1}"];

fn schema() -> &'static ToolSchema {
    static SCHEMA: OnceLock<ToolSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        ToolSchema::compile(&json!({
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}, "path": {"type": "string"}},
            "additionalProperties": false
        }))
        .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let mut raw = String::new();
    let mut meant = Map::new();
    for chunk in data.chunks(6).take(4) {
        let key = KEYS[usize::from(chunk[0]) % KEYS.len()];
        let value: String = chunk[1..].iter().map(|b| PIECES[usize::from(*b) % PIECES.len()]).collect();
        // One line break after the opening tag and one before the closing tag are the syntax's.
        let (written, value) = match chunk[0] / 3 % 2 {
            0 => {
                let inner = value.strip_prefix('\n').unwrap_or(&value);
                let inner = inner.strip_suffix('\n').unwrap_or(inner).to_string();
                (format!("<parameter name=\"{key}\">{value}</parameter>\n"), inner)
            }
            _ => (format!("<parameter={key}>\n{value}\n</parameter>\n"), value),
        };
        raw.push_str(&written);
        if meant.insert(key.to_string(), Value::String(value)).is_some() {
            return; // a key given twice: not a call anyone wrote
        }
    }
    if meant.is_empty() {
        return;
    }
    let outcome = repair(&raw, Some(schema()), &RepairOptions { stop_reason: Some("tool_use".into()), ..Default::default() });
    if outcome.status == Status::Repaired {
        assert_eq!(outcome.input, Some(Value::Object(meant)), "{raw:?}");
    }
});
