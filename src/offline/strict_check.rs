//! `toolmend strict-check`: for each tool, whether `serve` could make it strict, as a typed
//! report that prints as text or JSON.

use crate::schema::strict::{normalize, Incompatible, StrictSchema};
use serde::Serialize;
use serde_json::Value;

/// One tool's line of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrictCheck {
    pub tool: String,
    pub compatible: bool,
    #[serde(flatten)]
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Verdict {
    Compatible { schema: Value, optional_params: usize, union_params: usize },
    Incompatible { reason: String, pointer: String },
}

/// The report for `(name, input_schema)` pairs, in their order.
pub fn strict_check(tools: &[(String, Value)]) -> Vec<StrictCheck> {
    tools
        .iter()
        .map(|(tool, schema)| {
            let verdict = match normalize(schema) {
                Ok(StrictSchema { schema, optional_params, union_params }) => {
                    Verdict::Compatible { schema, optional_params, union_params }
                }
                Err(Incompatible { pointer, reason }) => Verdict::Incompatible { reason, pointer },
            };
            StrictCheck { tool: tool.clone(), compatible: matches!(verdict, Verdict::Compatible { .. }), verdict }
        })
        .collect()
}

/// The report as text, one entry per tool.
pub fn render_text(report: &[StrictCheck]) -> String {
    let mut out = String::new();
    for check in report {
        let name = &check.tool;
        match &check.verdict {
            Verdict::Compatible { schema, optional_params, union_params } => out.push_str(&format!(
                "{name}: compatible ({optional_params} optional, {union_params} union-typed parameters)\n  {schema}\n"
            )),
            Verdict::Incompatible { reason, pointer } => {
                out.push_str(&format!("{name}: incompatible: {reason} at '{pointer}'\n"))
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_text_say_the_same() {
        let tools = vec![
            ("ok".to_string(), json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            ("bad".to_string(), json!({"type": "object", "properties": {"a": {"not": {}}}})),
        ];
        let report = strict_check(&tools);
        let value = serde_json::to_value(&report).unwrap();
        assert_eq!(value[0]["compatible"], true);
        assert_eq!(value[0]["optional_params"], 1);
        assert_eq!(
            value[1],
            json!({"tool": "bad", "compatible": false, "reason": "unsupported keyword 'not'", "pointer": "/properties/a/not"})
        );
        let text = render_text(&report);
        assert!(text.contains("ok: compatible (1 optional, 0 union-typed parameters)"), "{text}");
        assert!(text.contains("bad: incompatible: unsupported keyword 'not' at '/properties/a/not'"), "{text}");
    }
}
