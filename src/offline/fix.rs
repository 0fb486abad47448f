//! `toolmend fix-transcript IN OUT`: a copy of a transcript where each repairable
//! `__unparsedToolInput` holds the repaired input instead; every other byte as it was.

use super::record::unparsed_tool_use;
use super::stops::TranscriptStops;
use super::{Repairer, ToolCatalog};
use crate::repair::Status;
use crate::schema::tool_list;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FixSummary {
    pub repaired: Vec<String>,
    pub refused: Vec<(String, String)>,
    pub lines_changed: usize,
    /// Inputs whose text could not be found in their line (left unchanged).
    pub not_located: Vec<(usize, String)>,
}

/// Writes the fixed copy to `output`, which must not exist yet, with the mode of `input`:
/// the copy is never readable by more users than the transcript (the umask may narrow it).
pub fn write_copy(output: &Path, input: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(std::fs::metadata(input)?.permissions().mode() & 0o777);
    }
    #[cfg(not(unix))]
    let _ = input;
    options.open(output)?.write_all(text.as_bytes())
}

/// Rewrites `text` (a whole transcript). Lines are split on `\n` and rejoined with it, so line
/// endings and a missing final newline stay as they were.
pub fn fix_transcript(text: &str, repairer: &Repairer) -> (String, FixSummary) {
    let mut summary = FixSummary::default();
    let mut learned = ToolCatalog::default();
    let mut stops = TranscriptStops::new(text);
    let mut out = Vec::with_capacity(text.len());
    for (index, line) in text.split('\n').enumerate() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            out.push(line.to_string());
            continue;
        };
        if value["type"] == "api-request-shape" {
            learned.add_all(tool_list(&value).unwrap_or_default(), None);
        }
        let is_record_of_message = value["type"] == "assistant" || value["type"] == "api-request-blob";
        let mut fixed = line.to_string();
        let blocks = value["message"]["content"].as_array().filter(|_| is_record_of_message).into_iter().flatten();
        for block in blocks.filter(|b| b["type"] == "tool_use") {
            let Some(mut call) = unparsed_tool_use(block) else { continue };
            // A request's copy of the message carries no stop reason: the assistant line's counts.
            call.stop_reason = match value["type"] == "assistant" {
                true => stops.of_line(&value),
                false => block["id"].as_str().and_then(|id| stops.of_tool_use(id)),
            };
            let id = call.id.clone().unwrap_or_default();
            let outcome = repairer.repair_call(&call, &learned);
            let (Status::Repaired, Some(input)) = (outcome.status, &outcome.input) else {
                if value["type"] == "assistant" {
                    let reason = outcome.reason.map(|r| r.to_string()).unwrap_or_else(|| "valid already".into());
                    summary.refused.push((id, reason));
                }
                continue;
            };
            let old = serde_json::to_string(&block["input"]).unwrap_or_default();
            if !fixed.contains(&old) {
                summary.not_located.push((index + 1, id));
                continue;
            }
            fixed = fixed.replace(&old, &input.to_string());
            if value["type"] == "assistant" {
                summary.repaired.push(id);
            }
        }
        if fixed != line {
            summary.lines_changed += 1;
        }
        out.push(fixed);
    }
    (out.join("\n"), summary)
}
