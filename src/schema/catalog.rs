//! Tool schemas by name, from an Anthropic `tools` array, an MCP `tools/list` result, or the
//! `api-request-shape` records of a Claude Code transcript.

use super::member::top_level_member;
use super::{SchemaCache, SchemaError, ToolSchema};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Default, Clone)]
pub struct ToolCatalog {
    tools: HashMap<String, Result<Arc<ToolSchema>, SchemaError>>,
}

impl ToolCatalog {
    /// Reads any of the supported tool-list shapes; `None` if `value` is none of them.
    pub fn from_value(value: &Value) -> Option<Self> {
        let list = tool_list(value)?;
        let mut catalog = Self::default();
        catalog.add_all(list, None);
        Some(catalog)
    }

    /// Adds (or replaces) every tool in a list of `{name, input_schema | inputSchema}`,
    /// compiling through `cache` when given. A name the list defines twice with different
    /// schemas is unusable: which one the model was shown cannot be told (the Anthropic API
    /// refuses such a list, a gateway in front of another model may not).
    pub fn add_all(&mut self, list: &[Value], cache: Option<&SchemaCache>) {
        // The first schema given for each name in this list, and the names given two.
        let mut first: HashMap<&str, &Value> = HashMap::new();
        let mut conflicting: Vec<&str> = Vec::new();
        for tool in list {
            let Some(name) = tool["name"].as_str() else { continue };
            let Some(schema) = tool.get("input_schema").or_else(|| tool.get("inputSchema")) else {
                continue;
            };
            if *first.entry(name).or_insert(schema) != schema && !conflicting.contains(&name) {
                conflicting.push(name);
            }
            if conflicting.contains(&name) {
                let message = format!("the tools list defines '{name}' more than once, with different schemas");
                self.tools.insert(name.to_string(), Err(SchemaError::at("", message)));
                continue;
            }
            let compiled = match cache {
                Some(cache) => cache.get_or_compile(schema),
                None => ToolSchema::compile(schema).map(Arc::new),
            };
            self.tools.insert(name.to_string(), compiled);
        }
    }

    pub fn get(&self, name: &str) -> Option<&Result<Arc<ToolSchema>, SchemaError>> {
        self.tools.get(name)
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The exact text of a Messages API request's top-level `tools` member, borrowed from the body;
/// every other member is skipped, never built. `None` when the body is not a JSON object or
/// has no `tools`.
pub fn request_tools_text(body: &[u8]) -> Option<&str> {
    top_level_member(body, "tools")
}

/// The tools array inside any supported shape.
pub fn tool_list(value: &Value) -> Option<&[Value]> {
    let candidates = [
        value.as_array(),
        value["tools"].as_array(),
        value["result"]["tools"].as_array(),
        value["shape"]["tools"].as_array(),
    ];
    candidates.into_iter().flatten().next().map(Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_anthropic_mcp_and_transcript_shapes() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let shapes = [
            json!([{"name": "a", "input_schema": schema}]),
            json!({"tools": [{"name": "a", "inputSchema": schema}]}),
            json!({"jsonrpc": "2.0", "result": {"tools": [{"name": "a", "inputSchema": schema}]}}),
            json!({"type": "api-request-shape", "shape": {"tools": [{"name": "a", "input_schema": schema}]}}),
        ];
        for shape in shapes {
            let catalog = ToolCatalog::from_value(&shape).expect("recognised");
            assert!(matches!(catalog.get("a"), Some(Ok(_))), "{shape}");
        }
        assert!(ToolCatalog::from_value(&json!({"name": "x"})).is_none());
    }

    #[test]
    fn a_name_given_two_schemas_in_one_list_is_unusable() {
        let schema = |kind: &str| json!({"type": "object", "properties": {"q": {"type": kind}}});
        let tool = |name: &str, kind: &str| json!({"name": name, "input_schema": schema(kind)});
        for list in [
            json!([tool("a", "string"), tool("a", "integer")]),
            json!([tool("a", "integer"), tool("a", "string")]),
            json!([tool("a", "string"), tool("a", "integer"), tool("a", "integer")]),
        ] {
            let catalog = ToolCatalog::from_value(&list).unwrap();
            let error = catalog.get("a").unwrap().as_ref().unwrap_err();
            assert!(error.message.contains("more than once"), "{error}");
        }
        // The same schema twice is one definition; a later list may still replace it.
        let mut catalog = ToolCatalog::from_value(&json!([tool("a", "string"), tool("a", "string")])).unwrap();
        assert!(matches!(catalog.get("a"), Some(Ok(_))));
        catalog.add_all(&[tool("a", "integer")], None);
        let replaced = catalog.get("a").unwrap().as_ref().unwrap();
        assert_eq!(replaced.source(), &schema("integer"));
    }

    #[test]
    fn a_request_gives_its_top_level_tools_text_as_sent() {
        let tools = r#"[ {"name": "a",  "input_schema": {"type": "object"}} ]"#;
        let body = format!(
            r#"{{"messages": [{{"role": "user", "content": [{{"tools": 1}}]}}], "tools": {tools}, "x": "\u00e9"}}"#
        );
        assert_eq!(request_tools_text(body.as_bytes()), Some(tools));
        for body in
            [&b"not json"[..], b"[1]", br#"{"messages": []}"#, br#"{"tools": [1], "#, br#"{"tools": 1, "tools": 2}"#]
        {
            assert!(request_tools_text(body).is_none(), "{}", String::from_utf8_lossy(body));
        }
    }
}
