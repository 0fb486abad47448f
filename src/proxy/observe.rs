//! Every decision the stream repair makes, reported: metrics, an event, the capture file and a
//! log line. This is the observer that Claude Code's hooks cannot be for unparsed calls.

use super::App;
use crate::repair::Status;
use crate::stream::Decision;
use serde_json::{json, Value};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// The capture file: one JSON line per call that was not valid, readable by `toolmend repair`.
pub struct Capture {
    file: Mutex<File>,
}

impl Capture {
    /// Opens (appending) or creates the file with mode 0600: it holds raw model output.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        Ok(Self { file: Mutex::new(options.open(path)?) })
    }

    fn write(&self, line: &Value) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = writeln!(file, "{line}") {
            tracing::warn!(%error, "writing the capture file failed");
        }
    }
}

impl App {
    pub(crate) fn observe(&self, decision: &Decision, request_id: &str, schema: Option<&Value>) {
        let outcome = &decision.outcome;
        let status = outcome.status.as_str();
        self.metrics.count_tool_call(&decision.tool, status);
        for edit in &outcome.edits {
            self.metrics.count_edit(edit.kind.name());
        }
        if outcome.status == Status::Valid {
            return;
        }
        self.adapt_strict(decision, request_id);
        let reason = outcome.reason.as_ref();
        match outcome.status {
            Status::Repaired => {
                tracing::info!(tool = %decision.tool, tool_use_id = %decision.tool_use_id, edits = outcome.edits.len(), "repaired tool input")
            }
            _ => {
                tracing::info!(tool = %decision.tool, tool_use_id = %decision.tool_use_id, reason = %reason.map(|r| r.to_string()).unwrap_or_default(), "refused to repair tool input")
            }
        }
        if let Some(capture) = &self.capture {
            capture.write(&json!({
                "id": decision.tool_use_id,
                "tool": decision.tool,
                "schema": schema,
                "raw": decision.raw,
                "stop_reason": decision.stop_reason,
                "request_id": request_id,
                "status": status,
                "input": outcome.input,
                "edits": outcome.edits,
                "reason": reason,
            }));
        }
        let redact = self.config.redact_inputs;
        self.record_event(
            status,
            json!({
                "tool": decision.tool,
                "tool_use_id": decision.tool_use_id,
                "request_id": request_id,
                "outcome": status,
                "stop_reason": decision.stop_reason,
                "edits": outcome.edits,
                "reason": reason,
                "raw": if redact { Value::Null } else { json!(decision.raw) },
                "input": if redact { None } else { outcome.input.clone() },
                // The exact text the re-issued call carried (the stream sends `to_string()`).
                "sent": match (&outcome.input, outcome.status) {
                    (Some(input), Status::Repaired) if !redact => Some(input.to_string()),
                    _ => None,
                },
            }),
        );
    }
}
