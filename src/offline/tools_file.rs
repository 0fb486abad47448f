//! Tool schemas from a file: an Anthropic `tools` array, an MCP `tools/list` result, a Claude
//! Code transcript (its latest `api-request-shape` record), or JSON Lines records with
//! `tool` and `schema` (the corpus shape).

use crate::schema::tool_list;
use serde_json::Value;

/// Why a file gave no tool schemas.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolsFileError {
    #[error("expected a tools array or an MCP tools/list result")]
    NotAToolList,
    #[error("line {line}: not JSON: {source}")]
    LineNotJson { line: usize, source: serde_json::Error },
    #[error("no tool schemas found")]
    Empty,
}

/// `(name, input_schema)` pairs, in file order, each name once (the last definition wins).
pub fn tools_from_text(text: &str) -> Result<Vec<(String, Value)>, ToolsFileError> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let list = tool_list(&value).ok_or(ToolsFileError::NotAToolList)?;
        return Ok(pairs(list));
    }
    let mut found: Vec<(String, Value)> = Vec::new();
    for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: Value =
            serde_json::from_str(line).map_err(|source| ToolsFileError::LineNotJson { line: index + 1, source })?;
        if value["type"] == "api-request-shape" {
            found = tool_list(&value).map(pairs).unwrap_or_default();
        } else if let (Some(name), Some(schema)) = (value["tool"].as_str(), value.get("schema")) {
            match found.iter_mut().find(|(n, _)| n == name) {
                Some(entry) => entry.1 = schema.clone(),
                None => found.push((name.to_string(), schema.clone())),
            }
        }
    }
    if found.is_empty() {
        return Err(ToolsFileError::Empty);
    }
    Ok(found)
}

fn pairs(list: &[Value]) -> Vec<(String, Value)> {
    list.iter()
        .filter_map(|tool| {
            let schema = tool.get("input_schema").or_else(|| tool.get("inputSchema"))?;
            Some((tool["name"].as_str()?.to_string(), schema.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_records_and_transcripts() {
        let records =
            "{\"tool\":\"a\",\"schema\":{\"type\":\"object\"}}\n{\"tool\":\"a\",\"schema\":{\"type\":\"object\"}}\n";
        assert_eq!(tools_from_text(records).unwrap().len(), 1);
        let transcript = "{\"type\":\"user\"}\n{\"type\":\"api-request-shape\",\"shape\":{\"tools\":[{\"name\":\"x\",\"input_schema\":{}}]}}\n";
        assert_eq!(tools_from_text(transcript).unwrap()[0].0, "x");
        assert!(tools_from_text("{\"nope\":1}").unwrap_err().to_string().contains("tools array"));
        assert!(tools_from_text("{}\nnot json").unwrap_err().to_string().starts_with("line 2"));
    }
}
