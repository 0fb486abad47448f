//! `toolmend hook post-tool-batch`: the one Claude Code hook that fires for a call whose input
//! did not parse. It repairs such calls with the schemas the transcript recorded and tells the
//! model the corrected input through `additionalContext`. A call's stop reason is its message's
//! in the transcript; where the transcript has none, the input may have been cut: refused.

use super::record::{Call, Origin};
use super::stops::MessageStops;
use super::{Repairer, ToolCatalog};
use crate::repair::{Outcome, Status};
use crate::schema::tool_list;
use serde_json::{json, Value};

/// One unparsed call the hook looked at.
#[derive(Debug, Clone)]
pub struct HookFinding {
    pub call: Call,
    pub outcome: Outcome,
}

impl HookFinding {
    /// The event reported to a sidecar or a file (the shape of `/events`).
    pub fn event(&self) -> Value {
        json!({
            "kind": format!("hook_{}", self.outcome.status.as_str()),
            "tool": self.call.tool,
            "tool_use_id": self.call.id,
            "outcome": self.outcome.status.as_str(),
            "raw": self.call.raw,
            "input": self.outcome.input,
            "edits": self.outcome.edits,
            "reason": self.outcome.reason,
        })
    }
}

/// How often, and how far apart, the transcript is read while a tool's schema or a call's stop
/// reason is missing from it: the CLI writes the transcript in the background and may not have
/// flushed it yet.
const TRANSCRIPT_READS: usize = 20;
const TRANSCRIPT_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

type Names = std::collections::HashMap<String, String>;

/// The unparsed calls in a PostToolBatch hook's input, repaired.
pub fn findings(hook_input: &Value, repairer: &Repairer) -> Vec<HookFinding> {
    let calls = hook_input["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default();
    let path = hook_input["transcript_path"].as_str();
    let (mut learned, mut names, mut stops) = read_transcript(path);
    for _ in 1..TRANSCRIPT_READS {
        let missing = calls.iter().filter_map(|call| unparsed_call(call, &names, &stops)).any(|call| {
            call.stop_reason.is_none() || call.tool.as_deref().is_none_or(|tool| !repairer.knows(tool, &learned))
        });
        if !missing || path.is_none() {
            break;
        }
        std::thread::sleep(TRANSCRIPT_RETRY);
        (learned, names, stops) = read_transcript(path);
    }
    calls
        .iter()
        .filter_map(|call| unparsed_call(call, &names, &stops))
        .map(|call| {
            let outcome = repairer.repair_call(&call, &learned);
            HookFinding { call, outcome }
        })
        .collect()
}

/// The schemas the transcript recorded, the tool name of every tool_use id in it, and the stop
/// reasons of its messages.
fn read_transcript(path: Option<&str>) -> (ToolCatalog, Names, MessageStops) {
    let transcript = path.and_then(|path| std::fs::read_to_string(path).ok()).unwrap_or_default();
    let mut learned = ToolCatalog::default();
    let mut names = Names::new();
    let mut stops = MessageStops::default();
    for line in transcript.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
        if value["type"] == "api-request-shape" {
            learned.add_all(tool_list(&value).unwrap_or_default(), None);
        }
        stops.add(&value);
        for block in value["message"]["content"].as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) {
                names.insert(id.to_string(), name.to_string());
            }
        }
    }
    (learned, names, stops)
}

/// One entry of the hook's `tool_calls`, if its input did not parse.
fn unparsed_call(call: &Value, names: &Names, stops: &MessageStops) -> Option<Call> {
    let unparsed = call["tool_input"].get("__unparsedToolInput")?;
    let id = call["tool_use_id"].as_str().map(String::from);
    let tool = call["tool_name"]
        .as_str()
        .or_else(|| call["name"].as_str())
        .map(String::from)
        .or_else(|| id.as_ref().and_then(|id| names.get(id).cloned()));
    Some(Call {
        stop_reason: id.as_deref().and_then(|id| stops.of_tool_use(id)).map(String::from),
        id,
        tool,
        schema: None,
        raw: unparsed["raw"].as_str()?.to_string(),
        declared_len: unparsed["len"].as_u64().map(|n| n as usize),
        why: unparsed["why"].as_str().map(String::from),
        origin: Origin::Hook,
    })
}

/// The hook's stdout: `additionalContext` telling the model what failed and what to send.
pub fn hook_output(findings: &[HookFinding]) -> Option<Value> {
    let mut lines = Vec::new();
    for finding in findings {
        let tool = finding.call.tool.as_deref().unwrap_or("the tool");
        let id = finding.call.id.as_deref().unwrap_or("?");
        match (&finding.outcome.status, &finding.outcome.input) {
            (Status::Repaired, Some(input)) => lines.push(format!(
                "toolmend: the call to {tool} (tool_use_id {id}) did not run because its input was not valid JSON. \
                 The corrected input is: {input} . Call {tool} again with exactly this input."
            )),
            _ => {
                let reason = finding.outcome.reason.as_ref().map(|r| r.to_string()).unwrap_or_default();
                lines.push(format!(
                    "toolmend: the call to {tool} (tool_use_id {id}) did not run because its input was not valid JSON, \
                     and it could not be repaired safely ({reason}). Send the call again as valid JSON."
                ));
            }
        }
    }
    (!lines.is_empty()).then(
        || json!({"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": lines.join("\n")}}),
    )
}
