//! `toolmend hook post-tool-batch`: the one Claude Code hook that fires for a call whose input
//! did not parse. It repairs such calls with the schemas the transcript recorded and tells the
//! model the corrected input through `additionalContext`. A call's stop reason is its message's
//! in the transcript; where the transcript has none, the input may have been cut: refused.

use super::record::{Call, Origin};
use super::transcript::TranscriptIndex;
use super::{Repairer, ToolCatalog};
use crate::repair::{Outcome, Status};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

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

/// How often, and how far apart, the transcript is looked at while a tool's schema or a call's
/// stop reason is missing from it: the CLI writes the transcript in the background and may not
/// have flushed it yet. Each look reads only what was appended since the last one.
const TRANSCRIPT_LOOKS: usize = 20;
const TRANSCRIPT_RETRY: std::time::Duration = std::time::Duration::from_millis(100);

/// What the hook made of its input: the calls, and notes for stderr (a transcript that could
/// not be read, its bad lines).
#[derive(Debug, Default)]
pub struct HookRun {
    pub findings: Vec<HookFinding>,
    pub notes: Vec<String>,
}

/// The unparsed calls in a PostToolBatch hook's input, repaired. `lossy` says the hook input
/// held lone surrogate escapes, read as U+FFFD: a call whose raw holds one is refused.
pub fn findings(hook_input: &Value, lossy: bool, repairer: &Repairer) -> HookRun {
    let calls = hook_input["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default();
    let path = hook_input["transcript_path"].as_str().map(PathBuf::from);
    let mut transcript = TranscriptTail::new(path.clone());
    for look in 1..=TRANSCRIPT_LOOKS {
        transcript.read_appended();
        // A request's record or its tool list not written yet is missing too.
        let missing = calls.iter().filter_map(|call| unparsed_call(call, &transcript.index)).any(|call| {
            let tools = transcript.tools_for(&call);
            call.stop_reason.is_none()
                || call.tool.as_deref().is_none_or(|tool| tools.is_none_or(|tools| !repairer.knows(tool, tools)))
        });
        if !missing || path.is_none() || look == TRANSCRIPT_LOOKS {
            break;
        }
        std::thread::sleep(TRANSCRIPT_RETRY);
    }
    transcript.read_last_line();
    let index = &transcript.index;
    let findings = calls
        .iter()
        .filter_map(|call| unparsed_call(call, index))
        .map(|call| {
            let tools = match call.id.as_deref() {
                Some(id) => index.tools_of_tool_use(id, index.merged()),
                None => Ok(index.merged()),
            };
            let lone_surrogate = lossy && call.raw.contains('\u{fffd}');
            let outcome = super::transcript::repair_call(repairer, &call, tools, Some(index), lone_surrogate);
            HookFinding { call, outcome }
        })
        .collect();
    let mut notes = transcript.notes;
    if let (Some(path), None) = (&path, &transcript.file) {
        if !calls.is_empty() {
            notes.insert(0, format!("{}: {}; only --tools schemas could be used", path.display(), transcript.unopened));
        }
    }
    HookRun { findings, notes }
}

/// The transcript as the hook reads it: each look reads only the bytes appended since the last,
/// whole lines at a time (a line still being written waits for the next look).
struct TranscriptTail {
    path: Option<PathBuf>,
    file: Option<std::fs::File>,
    /// Why the file could not be opened, when it could not.
    unopened: String,
    /// The bytes after the last whole line.
    pending: Vec<u8>,
    lines: usize,
    index: TranscriptIndex,
    notes: Vec<String>,
}

impl TranscriptTail {
    fn new(path: Option<PathBuf>) -> Self {
        Self {
            path,
            file: None,
            unopened: "no transcript_path given".into(),
            pending: Vec::new(),
            lines: 0,
            index: TranscriptIndex::default(),
            notes: Vec::new(),
        }
    }

    fn tools_for(&self, call: &Call) -> Option<&ToolCatalog> {
        match call.id.as_deref() {
            Some(id) => self.index.tools_of_tool_use(id, self.index.merged()).ok(),
            None => Some(self.index.merged()),
        }
    }

    fn read_appended(&mut self) {
        use std::io::Read;
        let Some(path) = &self.path else { return };
        if self.file.is_none() {
            match super::open::open_regular_file(path) {
                Ok(file) => self.file = Some(file),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    self.unopened = "the transcript is not there".into();
                    return;
                }
                Err(error) => {
                    self.unopened = format!("the transcript cannot be read: {error}");
                    return;
                }
            }
        }
        let Some(file) = &mut self.file else { return };
        if let Err(error) = file.read_to_end(&mut self.pending) {
            self.notes.push(format!("{}: reading failed: {error}", path.display()));
            return;
        }
        let Some(end) = self.pending.iter().rposition(|&b| b == b'\n') else { return };
        let rest = self.pending.split_off(end + 1);
        let whole = std::mem::replace(&mut self.pending, rest);
        self.add_lines(&whole[..end]);
    }

    /// The last line, if it has no line end: the CLI is done writing by now.
    fn read_last_line(&mut self) {
        let last = std::mem::take(&mut self.pending);
        if !super::transcript::is_blank(&last) {
            self.add_lines(&last);
        }
    }

    fn add_lines(&mut self, bytes: &[u8]) {
        for line in super::transcript::lines(bytes) {
            let number = self.lines + line.number;
            match &line.read {
                Ok(read) => self.index.add(&read.value),
                Err(_) if super::transcript::is_blank(line.bytes) => {}
                Err(problem) => {
                    let path = self.path.as_deref().unwrap_or(Path::new("?")).display();
                    self.notes.push(format!("{path}:{number}: {problem}"));
                }
            }
        }
        self.lines += bytes.split(|&b| b == b'\n').count();
    }
}

/// One entry of the hook's `tool_calls`, if its input did not parse.
fn unparsed_call(call: &Value, index: &TranscriptIndex) -> Option<Call> {
    let unparsed = call["tool_input"].get("__unparsedToolInput")?;
    let id = call["tool_use_id"].as_str().map(String::from);
    let tool = call["tool_name"]
        .as_str()
        .or_else(|| call["name"].as_str())
        .map(String::from)
        .or_else(|| id.as_deref().and_then(|id| index.name_of(id)).map(String::from));
    Some(Call {
        stop_reason: id.as_deref().and_then(|id| index.stops.of_tool_use(id)),
        id,
        tool,
        schema: None,
        raw: unparsed["raw"].as_str()?.to_string(),
        declared_len: super::record::DeclaredLen::of(unparsed),
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
        let why = finding.outcome.reason.as_ref().map(|r| r.to_string()).unwrap_or_default();
        lines.push(match (&finding.outcome.status, &finding.outcome.input) {
            (Status::Repaired, Some(input)) => format!(
                "toolmend: the call to {tool} (tool_use_id {id}) did not run because its input was not valid JSON. \
                 The corrected input is: {input} . Call {tool} again with exactly this input."
            ),
            // A tool that joined late (`why: may_be_judged_repaired`): the CLI held the call back
            // although its input was valid JSON that fits the tool's schema.
            (Status::Valid, Some(input)) => format!(
                "toolmend: the call to {tool} (tool_use_id {id}) did not run, but its input was valid JSON that fits \
                 the tool's schema: {input} . Nothing needs correcting: call {tool} again with exactly this input."
            ),
            (Status::Invalid, _) => format!(
                "toolmend: the call to {tool} (tool_use_id {id}) did not run. Its input is JSON but does not fit \
                 the tool's schema ({why}), and nothing could be mended without guessing. Send the call again with \
                 input that fits the schema."
            ),
            _ => format!(
                "toolmend: the call to {tool} (tool_use_id {id}) did not run because its input was not valid JSON, \
                 and it could not be repaired safely ({why}). Send the call again as valid JSON."
            ),
        });
    }
    (!lines.is_empty()).then(
        || json!({"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": lines.join("\n")}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Attack round 9 D1: the hook read the whole transcript again on every look (up to 20).
    /// Each look now reads only what was appended; a line still being written waits.
    #[test]
    fn each_look_reads_only_what_was_appended() {
        let dir = std::env::temp_dir().join(format!("toolmend-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        let call = |id: &str| {
            json!({"type": "assistant", "message": {"id": id, "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {}}]}})
            .to_string()
        };
        let (first, second) = (call("toolu_1"), call("toolu_2"));
        std::fs::write(&path, format!("{first}\n{}", &second[..10])).unwrap();
        let mut tail = TranscriptTail::new(Some(path.clone()));
        tail.read_appended();
        tail.read_appended();
        assert_eq!((tail.lines, tail.index.name_of("toolu_1")), (1, Some("Bash")));
        assert!(!tail.index.is_duplicate("toolu_1"), "a line read once");
        assert_eq!(tail.index.name_of("toolu_2"), None, "half a line waits");
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        write!(file, "{}\nnot json\n", &second[10..]).unwrap();
        tail.read_appended();
        tail.read_appended();
        tail.read_last_line();
        assert_eq!(tail.index.name_of("toolu_2"), Some("Bash"));
        assert!(!tail.index.is_duplicate("toolu_1") && !tail.index.is_duplicate("toolu_2"));
        assert_eq!(tail.notes.len(), 1, "{:?}", tail.notes);
        assert!(tail.notes[0].ends_with("t.jsonl:3: not JSON: expected ident at line 1 column 2"), "{:?}", tail.notes);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
