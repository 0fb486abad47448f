//! Offline repair of recorded calls: `toolmend repair` over JSON Lines of records, Claude Code
//! transcripts or sidecar captures, one result line per call.

pub mod fix;
pub mod hook;
mod record;
pub mod report;
pub mod scan;
mod stops;
pub mod strict_check;
mod tools_file;

pub use crate::schema::{tool_list, ToolCatalog};
pub use record::{classify, valid_text, Call, Line, LineError, Origin, ResultInput, ResultLine};
pub use tools_file::{tools_from_text, ToolsFileError};

use crate::repair::{repair, Outcome, Refusal, RefusalCode, RepairOptions, Status, StopReason};
use crate::schema::{SchemaCache, SchemaError, ToolSchema};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io::{self, BufRead, Write};
use std::sync::Arc;

/// Lines read and repaired together: enough to keep both cores busy, little to hold.
const BATCH_LINES: usize = 4096;

/// A plain record line, read without building a JSON tree; the schema stays text.
#[derive(Deserialize)]
struct PlainRecord<'a> {
    raw: String,
    #[serde(borrow)]
    schema: Option<&'a RawValue>,
    id: Option<String>,
    tool_use_id: Option<String>,
    tool: Option<String>,
    stop_reason: Option<String>,
    len: Option<usize>,
    /// Set on the sidecar's capture lines only.
    #[serde(borrow)]
    request_id: Option<std::borrow::Cow<'a, str>>,
}

impl PlainRecord<'_> {
    fn into_call(self) -> Call {
        Call {
            id: self.id.or(self.tool_use_id),
            tool: self.tool,
            schema: None,
            raw: self.raw,
            stop_reason: self.stop_reason,
            declared_len: self.len,
            why: None,
            origin: if self.request_id.is_some() { Origin::Capture } else { Origin::Record },
        }
    }
}

/// Counts for one run, printed as a summary and used for the exit code.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub valid: usize,
    pub repaired: usize,
    pub refused: usize,
    /// Parsed as JSON but broke the schema, with nothing lossless to mend it.
    pub invalid: usize,
    /// Lines that were not JSON or not a known kind of line.
    pub bad_lines: usize,
}

impl Summary {
    fn count(&mut self, status: Status) {
        match status {
            Status::Valid => self.valid += 1,
            Status::Repaired => self.repaired += 1,
            Status::Invalid => self.invalid += 1,
            _ => self.refused += 1,
        }
    }

    pub fn add(&mut self, other: &Summary) {
        self.valid += other.valid;
        self.repaired += other.repaired;
        self.refused += other.refused;
        self.invalid += other.invalid;
        self.bad_lines += other.bad_lines;
    }
}

/// Input lines as text; one that is not UTF-8 is a problem of its own and the next line goes on.
struct Lines<R> {
    reader: R,
    /// Lines read so far (the number of the line just returned).
    number: usize,
    /// A read failed: the rest of the source cannot be trusted.
    failed: bool,
}

/// Why one input line could not be read.
#[derive(Debug, thiserror::Error)]
enum LineProblem {
    #[error("not UTF-8 (invalid byte at offset {0} of the line): skipped")]
    NotUtf8(usize),
    #[error("reading failed ({0}); the rest of this input is skipped")]
    Read(io::Error),
}

impl<R: BufRead> Lines<R> {
    fn next_line(&mut self) -> Option<Result<String, LineProblem>> {
        if self.failed {
            return None;
        }
        let mut bytes = Vec::new();
        match self.reader.read_until(b'\n', &mut bytes) {
            Ok(0) => None,
            Ok(_) => {
                self.number += 1;
                if bytes.last() == Some(&b'\n') {
                    bytes.pop();
                    if bytes.last() == Some(&b'\r') {
                        bytes.pop();
                    }
                }
                Some(String::from_utf8(bytes).map_err(|e| LineProblem::NotUtf8(e.utf8_error().valid_up_to())))
            }
            Err(error) => {
                self.failed = true;
                self.number += 1;
                Some(Err(LineProblem::Read(error)))
            }
        }
    }
}

/// Repairs calls one source at a time; `tools` (from `--tools`) backs up the schemas a
/// transcript records itself.
pub struct Repairer {
    tools: ToolCatalog,
    cache: SchemaCache,
}

impl Repairer {
    pub fn new(tools: ToolCatalog) -> Self {
        Self { tools, cache: SchemaCache::new(1024) }
    }

    /// Whether a schema for `tool` is known, from `learned` or `--tools`.
    pub fn knows(&self, tool: &str, learned: &ToolCatalog) -> bool {
        learned.get(tool).is_some() || self.tools.get(tool).is_some()
    }

    /// Reads JSON Lines from `reader`, writes one result line per call to `out`, and reports
    /// bad lines (not JSON, not UTF-8, unreadable) as `source:line: message` to `diagnostics`;
    /// the lines around them still run. Only a failure to write is an error. Plain records are repaired on all
    /// cores, a batch at a time; every other line keeps its order-dependent, one-by-one path
    /// (a transcript's schemas apply to the calls after them). Output keeps input order.
    pub fn run(
        &self,
        reader: impl BufRead,
        source: &str,
        out: &mut impl Write,
        diagnostics: &mut impl Write,
    ) -> io::Result<Summary> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut summary = Summary::default();
        let mut learned = ToolCatalog::default();
        let mut lines = Lines { reader, number: 0, failed: false };
        loop {
            let mut batch = Vec::with_capacity(BATCH_LINES);
            while batch.len() < BATCH_LINES {
                match lines.next_line() {
                    None => break,
                    Some(Ok(line)) => batch.push((lines.number - 1, line)),
                    Some(Err(problem)) => {
                        summary.bad_lines += 1;
                        writeln!(diagnostics, "{source}:{}: {problem}", lines.number)?;
                    }
                }
            }
            if batch.is_empty() {
                return Ok(summary);
            }
            let repaired = self.repair_plain_records(&batch, threads);
            for ((index, line), plain) in batch.iter().zip(repaired) {
                match plain {
                    Some((status, result)) => {
                        summary.count(status);
                        out.write_all(&result)?;
                    }
                    None => self.line_in_order(line, *index, source, &mut learned, &mut summary, out, diagnostics)?,
                }
            }
        }
    }

    /// Each plain record of the batch repaired (status and result line), on `threads` threads;
    /// `None` for lines that are not plain records.
    fn repair_plain_records(&self, batch: &[(usize, String)], threads: usize) -> Vec<Option<(Status, Vec<u8>)>> {
        let repair_one = |line: &String| {
            let record = serde_json::from_str::<PlainRecord>(line).ok()?;
            let schema = record.schema.filter(|s| s.get() != "null").map(|s| self.cache.get_or_compile_text(s.get()));
            let call = record.into_call();
            let outcome = self.repair_with(&call, schema);
            let mut result = serde_json::to_vec(&ResultLine::new(&call, &outcome)).ok()?;
            result.push(b'\n');
            Some((outcome.status, result))
        };
        let chunk = batch.len().div_ceil(threads.max(1));
        std::thread::scope(|scope| {
            let workers: Vec<_> = batch
                .chunks(chunk.max(1))
                .map(|part| {
                    (part.len(), scope.spawn(move || part.iter().map(|(_, line)| repair_one(line)).collect::<Vec<_>>()))
                })
                .collect();
            // A worker that failed leaves its lines to the one-by-one path, in place.
            workers.into_iter().flat_map(|(len, w)| w.join().unwrap_or_else(|_| vec![None; len])).collect()
        })
    }

    /// A line that is not a plain record: a transcript line, a tools record, or a bad line.
    #[allow(clippy::too_many_arguments)]
    fn line_in_order(
        &self,
        line: &str,
        index: usize,
        source: &str,
        learned: &mut ToolCatalog,
        summary: &mut Summary,
        out: &mut impl Write,
        diagnostics: &mut impl Write,
    ) -> io::Result<()> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let parsed = serde_json::from_str(line).map_err(LineError::from).and_then(classify);
        match parsed {
            Err(message) => {
                summary.bad_lines += 1;
                writeln!(diagnostics, "{source}:{}: {message}", index + 1)?;
            }
            Ok(Line::Tools(value)) => learned.add_all(tool_list(&value).unwrap_or_default(), Some(&self.cache)),
            Ok(Line::Nothing) => {}
            Ok(Line::Calls(calls)) => {
                for call in &calls {
                    let outcome = self.repair_call(call, learned);
                    summary.count(outcome.status);
                    serde_json::to_writer(&mut *out, &ResultLine::new(call, &outcome))?;
                    out.write_all(b"\n")?;
                }
            }
        }
        Ok(())
    }

    /// One call against its schema: the line's own, the transcript's, `--tools`, or none.
    pub fn repair_call(&self, call: &Call, learned: &ToolCatalog) -> Outcome {
        let schema = match (&call.schema, call.tool.as_deref()) {
            (Some(schema), _) => Some(self.cache.get_or_compile(schema)),
            (None, Some(tool)) => learned.get(tool).or_else(|| self.tools.get(tool)).cloned(),
            (None, None) => None,
        };
        self.repair_with(call, schema)
    }

    /// A call from a message (transcript, capture, hook) with no stop reason may have been cut;
    /// one with no schema cannot be checked, nor can a plain record naming its tool: refused.
    /// Only a plain record without a tool name is repaired in generic mode.
    fn repair_with(&self, call: &Call, schema: Option<Result<Arc<ToolSchema>, SchemaError>>) -> Outcome {
        let stop_reason = match (&call.stop_reason, call.origin.from_a_message()) {
            (None, true) => Some(StopReason::UNRECORDED.to_string()),
            (stop_reason, _) => stop_reason.clone(),
        };
        let options = RepairOptions {
            stop_reason,
            declared_len: call.declared_len,
            tool: call.tool.clone(),
            ..RepairOptions::default()
        };
        let schema = schema.or_else(|| call.tool.as_deref().and_then(|tool| self.tools.get(tool).cloned()));
        match schema {
            Some(Ok(schema)) => repair(&call.raw, Some(&schema), &options),
            Some(Err(error)) => Outcome::refused(Refusal::new(RefusalCode::UnusableSchema, error.to_string(), None)),
            None if (call.origin.from_a_message() || call.tool.is_some())
                && crate::repair::parse_as_cli(&call.raw).is_none() =>
            {
                let tool = call.tool.as_deref().unwrap_or("?");
                Outcome::refused(Refusal::new(
                    RefusalCode::UnusableSchema,
                    format!("no schema recorded for tool '{tool}'"),
                    None,
                ))
            }
            None => repair(&call.raw, None, &options),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn run(input: &str) -> (Vec<Value>, String, Summary) {
        let mut out = Vec::new();
        let mut diagnostics = Vec::new();
        let summary = Repairer::new(ToolCatalog::default())
            .run(input.as_bytes(), "in.jsonl", &mut out, &mut diagnostics)
            .unwrap();
        let lines = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (lines, String::from_utf8(diagnostics).unwrap(), summary)
    }

    #[test]
    fn bad_lines_are_reported_with_their_number_and_the_run_goes_on() {
        let schema = json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]});
        let input = format!(
            "{}\nnot json\n{{\"nothing\": 1}}\n{}\n",
            json!({"id": "a", "schema": schema, "raw": "{\"cmd\": ls}"}),
            json!({"id": "b", "raw": "{\"cmd\": \"ls\"}"})
        );
        let (lines, diagnostics, summary) = run(&input);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["id"], "a");
        assert_eq!(lines[0]["status"], "repaired");
        assert_eq!(lines[0]["input"], json!({"cmd": "ls"}));
        assert_eq!(lines[1]["status"], "valid");
        assert!(diagnostics.contains("in.jsonl:2: not JSON"), "{diagnostics}");
        assert!(diagnostics.contains("in.jsonl:3: expected a record"), "{diagnostics}");
        assert_eq!(summary.bad_lines, 2);
    }

    #[test]
    fn output_keeps_input_order_across_batches_and_line_kinds() {
        let schema = json!({"type": "object", "properties": {"cmd": {"type": "string"}}});
        let mut input = String::new();
        for n in 0..(BATCH_LINES * 2 + 7) {
            if n == BATCH_LINES + 3 {
                let transcript_line = json!({"type": "assistant", "message": {"content": [{"type": "tool_use",
                    "id": "transcript", "name": "run", "input": {"__unparsedToolInput": {"raw": "{\"cmd\": ls}", "len": 11}}}]}});
                input.push_str(&format!("{transcript_line}\n"));
            }
            let raw = if n % 2 == 0 { format!("{{\"cmd\": c{n}}}") } else { format!("{{\"cmd\": \"c{n}\"}}") };
            input.push_str(&format!("{}\n", json!({"id": format!("r{n}"), "schema": schema, "raw": raw})));
        }
        let (lines, _, summary) = run(&input);
        let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
        let mut expected: Vec<String> = (0..(BATCH_LINES * 2 + 7)).map(|n| format!("r{n}")).collect();
        expected.insert(BATCH_LINES + 3, "transcript".into());
        assert_eq!(ids, expected);
        assert_eq!(lines[2]["input"], json!({"cmd": "c2"}));
        assert_eq!(summary.repaired, BATCH_LINES + 4);
        // The transcript call names no stop reason and its tool no schema: refused.
        assert_eq!(summary.refused, 1);
    }

    #[test]
    fn an_unusable_schema_refuses_that_call_only() {
        let input = format!(
            "{}\n{}\n",
            json!({"id": "a", "schema": {"type": "strnig"}, "raw": "{x: 1}"}),
            json!({"id": "b", "raw": "{x: 1}"})
        );
        let (lines, _, _) = run(&input);
        assert_eq!(lines[0]["status"], "refused");
        assert_eq!(lines[0]["reason"]["code"], "unusable_schema");
        assert_eq!(lines[1]["status"], "repaired");
    }
}
