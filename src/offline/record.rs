//! The input lines `toolmend repair` understands, detected per line, and the result it writes.

use crate::repair::{Edit, Outcome, Refusal};
use serde::Serialize;
use serde_json::Value;

/// One tool call to repair, whatever line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: Option<String>,
    pub tool: Option<String>,
    /// The schema given on the line itself (records and captures).
    pub schema: Option<Value>,
    pub raw: String,
    pub stop_reason: Option<String>,
    /// Full length in UTF-16 units when `raw` may be a prefix (transcripts).
    pub declared_len: Option<usize>,
    /// The CLI's `why` marker (`may_be_judged_repaired` for late-joining MCP tools).
    pub why: Option<String>,
}

/// What one input line holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Calls(Vec<Call>),
    /// A transcript's record of the tools sent with a request.
    Tools(Value),
    /// A line that holds no tool call to repair (other transcript lines).
    Nothing,
}

/// Why a line is not one `toolmend repair` understands.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    #[error("not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("expected a record with \"raw\", a Claude Code transcript line or a capture line")]
    UnknownKind,
    #[error("\"raw\" must be a string")]
    RawNotString,
}

/// Detects the kind of a parsed line.
pub fn classify(mut value: Value) -> Result<Line, LineError> {
    if value.get("raw").is_some() {
        return record(&mut value).map(|call| Line::Calls(vec![call]));
    }
    if value["type"] == "api-request-shape" {
        return Ok(Line::Tools(value));
    }
    if value["type"] == "assistant" {
        let content = value["message"]["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        return Ok(Line::Calls(content.iter().filter_map(unparsed_tool_use).collect()));
    }
    if value.get("type").is_some() || value.get("uuid").is_some() {
        return Ok(Line::Nothing);
    }
    Err(LineError::UnknownKind)
}

/// `{"id"?, "tool"?, "schema"?, "raw", "stop_reason"?}` — also the sidecar's capture lines.
fn record(value: &mut Value) -> Result<Call, LineError> {
    let schema = Some(value["schema"].take()).filter(|s| !s.is_null());
    let Some(raw) = value["raw"].as_str() else {
        return Err(LineError::RawNotString);
    };
    let text = |key: &str| value[key].as_str().map(String::from);
    Ok(Call {
        id: text("id").or_else(|| text("tool_use_id")),
        tool: text("tool"),
        schema,
        raw: raw.to_string(),
        stop_reason: text("stop_reason"),
        declared_len: value["len"].as_u64().map(|n| n as usize),
        why: None,
    })
}

/// A transcript's `tool_use` block whose input the CLI could not parse.
pub fn unparsed_tool_use(block: &Value) -> Option<Call> {
    if block["type"] != "tool_use" {
        return None;
    }
    let unparsed = block["input"].get("__unparsedToolInput")?;
    Some(Call {
        id: block["id"].as_str().map(String::from),
        tool: block["name"].as_str().map(String::from),
        schema: None,
        raw: unparsed["raw"].as_str()?.to_string(),
        stop_reason: None,
        declared_len: unparsed["len"].as_u64().map(|n| n as usize),
        why: unparsed["why"].as_str().map(String::from),
    })
}

/// One output line: `{"id", "tool", "status", "input", "edits", "reason"}`.
#[derive(Debug, Serialize)]
pub struct ResultLine<'a> {
    pub id: Option<&'a str>,
    pub tool: Option<&'a str>,
    pub status: &'static str,
    pub input: Option<&'a Value>,
    pub edits: &'a [Edit],
    pub reason: Option<&'a Refusal>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'a str>,
}

impl<'a> ResultLine<'a> {
    pub fn new(call: &'a Call, outcome: &'a Outcome) -> Self {
        Self {
            id: call.id.as_deref(),
            tool: call.tool.as_deref(),
            status: outcome.status.as_str(),
            input: outcome.input.as_ref(),
            edits: &outcome.edits,
            reason: outcome.reason.as_ref(),
            why: call.why.as_deref(),
        }
    }
}
