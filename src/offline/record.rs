//! The input lines `toolmend repair` understands, detected per line, and the result it writes.

use crate::repair::{Edit, Outcome, Refusal, Status};
use serde::Serialize;
use serde_json::value::RawValue;
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
    pub declared_len: DeclaredLen,
    /// The CLI's `why` marker (`may_be_judged_repaired` for late-joining MCP tools).
    pub why: Option<String>,
    pub origin: Origin,
}

/// A call's recorded `len`: the input's full length when `raw` may be only its first part.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeclaredLen {
    #[default]
    Absent,
    /// UTF-16 units.
    Chars(usize),
    /// Present but not a count (a string, a fraction, a boolean): the record is damaged and its
    /// input may be a prefix, so it is never repaired. Holds the value as written.
    Unreadable(String),
}

impl DeclaredLen {
    /// The `len` member of `holder` (absent or `null`: none recorded).
    pub fn of(holder: &Value) -> Self {
        match holder.get("len") {
            None | Some(Value::Null) => Self::Absent,
            Some(len) => match len.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) => Self::Chars(n),
                None => Self::Unreadable(len.to_string()),
            },
        }
    }
}

/// Where a call was recorded: it decides what a missing stop reason or schema means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A plain record: the user gave what they had. No stop reason means none is known (the
    /// call is repaired); no schema and no tool name means generic mode.
    Record,
    /// A sidecar capture line (it carries a `request_id`).
    Capture,
    /// A `tool_use` block of a Claude Code transcript.
    Transcript,
    /// A call in a PostToolBatch hook's input.
    Hook,
}

impl Origin {
    /// Whether the call comes from a message that stopped for a reason and a tool that had a
    /// schema: when either is not at hand, the call may be cut or cannot be checked.
    pub fn from_a_message(self) -> bool {
        self != Self::Record
    }
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
        let stop_reason = super::stops::own(&value).map(String::from);
        let calls = content.iter().filter_map(unparsed_tool_use);
        return Ok(Line::Calls(calls.map(|call| Call { stop_reason: stop_reason.clone(), ..call }).collect()));
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
        declared_len: DeclaredLen::of(value),
        why: None,
        origin: if value["request_id"].is_string() { Origin::Capture } else { Origin::Record },
    })
}

/// A transcript's `tool_use` block whose input the CLI could not parse. Its stop reason is its
/// message's, which the caller sets (see [`super::stops`]).
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
        declared_len: DeclaredLen::of(unparsed),
        why: unparsed["why"].as_str().map(String::from),
        origin: Origin::Transcript,
    })
}

/// A valid input's own text as the CLI reads it (one leading BOM dropped), never re-spelled;
/// `None` where the CLI reads the text as `{}` (empty, or `null`): that is the input then.
pub fn valid_text(raw: &str) -> Option<&str> {
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    match text.trim_matches([' ', '\t', '\n', '\r']) {
        "" | "null" => None,
        _ => Some(text),
    }
}

/// A result's input: a valid one as its own text, a repaired or invalid one as the value.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ResultInput<'a> {
    Text(Box<RawValue>),
    Value(&'a Value),
}

impl<'a> ResultInput<'a> {
    fn of(call: &Call, outcome: &'a Outcome) -> Option<Self> {
        let own = valid_text(&call.raw).filter(|_| outcome.status == Status::Valid).and_then(|text| {
            // Line breaks can only sit between tokens; in JSON Lines they become spaces.
            let line = if text.contains(['\n', '\r']) { text.replace(['\n', '\r'], " ") } else { text.to_string() };
            RawValue::from_string(line).ok()
        });
        own.map(Self::Text).or_else(|| outcome.input.as_ref().map(Self::Value))
    }
}

/// One output line: `{"id", "tool", "status", "input", "edits", "reason"}`.
#[derive(Debug, Serialize)]
pub struct ResultLine<'a> {
    pub id: Option<&'a str>,
    pub tool: Option<&'a str>,
    pub status: &'static str,
    pub input: Option<ResultInput<'a>>,
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
            input: ResultInput::of(call, outcome),
            edits: &outcome.edits,
            reason: outcome.reason.as_ref(),
            why: call.why.as_deref(),
        }
    }
}
