//! Offline repair of recorded calls: `toolmend repair` over JSON Lines of records, Claude Code
//! transcripts or sidecar captures, one result line per call.

pub mod fix;
pub mod hook;
mod lines;
pub mod open;
mod record;
pub mod report;
pub mod scan;
mod stops;
pub mod strict_check;
mod tools_file;
pub mod transcript;

pub use crate::schema::{tool_list, ToolCatalog};
pub use record::{classify, valid_text, Call, DeclaredLen, Line, LineError, Origin, ResultInput, ResultLine};
pub use tools_file::{tools_from_text, ToolsFileError};

use crate::repair::{repair, Outcome, Refusal, RefusalCode, RepairOptions, Status, StopReason};
use crate::schema::{SchemaCache, SchemaError, ToolSchema};
use lines::{Batch, Lines};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::ops::Range;
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};

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
            declared_len: self.len.map_or(DeclaredLen::Absent, DeclaredLen::Chars),
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

/// The state of a source's one-by-one path: the tools its transcript lines recorded, and
/// the counts so far.
struct InOrder<'s> {
    source: &'s str,
    learned: ToolCatalog,
    /// The transcript's tool lists by hash and its requests: the tools a call was sent with.
    requests: transcript::TranscriptIndex,
    summary: Summary,
}

/// A worker repairing some lines of a batch (their indices in it).
type Worker<'scope> = (Range<usize>, ScopedJoinHandle<'scope, Part>);

/// Compiled schemas by their exact text, for one worker.
type KnownSchemas<'a> = HashMap<&'a str, Result<Arc<ToolSchema>, SchemaError>, foldhash::fast::RandomState>;

/// What a worker made of its lines: the plain records' result lines one after another, and
/// where each other line (left to the one-by-one path) falls between them.
#[derive(Default)]
struct Part {
    out: Vec<u8>,
    /// Each other line's index in the batch and the length of `out` when it was met.
    others: Vec<(usize, usize)>,
    summary: Summary,
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
    /// the lines around them still run. Only a failure to write is an error. Plain records are
    /// repaired on all cores, a batch at a time, while the next batch is read and the last one
    /// written; every other line keeps its order-dependent, one-by-one path (a transcript's
    /// schemas apply to the calls after them). Output keeps input order.
    pub fn run(
        &self,
        reader: impl BufRead,
        source: &str,
        out: &mut impl Write,
        diagnostics: &mut impl Write,
    ) -> io::Result<Summary> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut ordered = InOrder {
            source,
            learned: ToolCatalog::default(),
            requests: Default::default(),
            summary: Summary::default(),
        };
        let mut lines = Lines::new(reader);
        // Buffers of batches and results done with, filled again (memory stays flat).
        let (mut spare_batch, mut spare_outs) = (None, Vec::new());
        std::thread::scope(|scope| {
            let mut in_flight: Option<(Arc<Batch>, Vec<Worker<'_>>)> = None;
            loop {
                let batch = Arc::new(lines.next_batch(spare_batch.take()));
                let workers = self.start_batch(scope, &batch, threads, &mut spare_outs);
                if let Some((previous, previous_workers)) = in_flight.take() {
                    self.finish_batch(&previous, previous_workers, &mut ordered, out, diagnostics, &mut spare_outs)?;
                    // Every worker of `previous` is joined, so it is ours alone again.
                    spare_batch = Arc::into_inner(previous);
                }
                if batch.is_empty() {
                    self.finish_batch(&batch, workers, &mut ordered, out, diagnostics, &mut spare_outs)?;
                    return Ok(ordered.summary);
                }
                in_flight = Some((batch, workers));
            }
        })
    }

    /// The batch's plain records shared out among `threads` workers, in order.
    fn start_batch<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        batch: &Arc<Batch>,
        threads: usize,
        spare_outs: &mut Vec<Vec<u8>>,
    ) -> Vec<Worker<'scope>> {
        let chunk = batch.len().div_ceil(threads.max(1)).max(1);
        (0..batch.len())
            .step_by(chunk)
            .map(|start| {
                let lines = start..(start + chunk).min(batch.len());
                let batch = Arc::clone(batch);
                let part = lines.clone();
                let out = spare_outs.pop().unwrap_or_default();
                (lines, scope.spawn(move || self.repair_part(&batch, part, out)))
            })
            .collect()
    }

    /// Writes a batch's results in input order: its unreadable lines first (as they were met
    /// while reading it), then each line's results, the plain records' from the workers.
    fn finish_batch(
        &self,
        batch: &Batch,
        workers: Vec<Worker<'_>>,
        ordered: &mut InOrder<'_>,
        out: &mut impl Write,
        diagnostics: &mut impl Write,
        spare_outs: &mut Vec<Vec<u8>>,
    ) -> io::Result<()> {
        for (number, problem) in &batch.problems {
            ordered.summary.bad_lines += 1;
            writeln!(diagnostics, "{}:{number}: {problem}", ordered.source)?;
        }
        for (lines, worker) in workers {
            // A worker that failed leaves its lines to the one-by-one path, in place.
            let Ok(part) = worker.join() else {
                for index in lines {
                    let (number, line) = batch.line(index);
                    self.line_in_order(line, number, ordered, out, diagnostics)?;
                }
                continue;
            };
            ordered.summary.add(&part.summary);
            let mut written = 0;
            for &(index, at) in &part.others {
                out.write_all(&part.out[written..at])?;
                written = at;
                let (number, line) = batch.line(index);
                self.line_in_order(line, number, ordered, out, diagnostics)?;
            }
            out.write_all(&part.out[written..])?;
            spare_outs.push(part.out);
        }
        Ok(())
    }

    /// One worker's share of a batch: each plain record repaired, its result line appended.
    fn repair_part(&self, batch: &Batch, lines: Range<usize>, mut out: Vec<u8>) -> Part {
        out.clear();
        let mut part = Part { out, ..Part::default() };
        // Each distinct schema text looked up in the shared cache once per part.
        let mut schemas = HashMap::with_hasher(foldhash::fast::RandomState::default());
        for index in lines {
            let start = part.out.len();
            match self.repair_plain_record(batch.line(index).1, &mut schemas, &mut part.out) {
                Some(status) => part.summary.count(status),
                None => {
                    part.out.truncate(start);
                    part.others.push((index, start));
                }
            }
        }
        part
    }

    /// A plain record's result line appended to `out`, and its status; `None` for a line that
    /// is not a plain record.
    fn repair_plain_record<'a>(
        &self,
        line: &'a str,
        schemas: &mut KnownSchemas<'a>,
        out: &mut Vec<u8>,
    ) -> Option<Status> {
        let record = serde_json::from_str::<PlainRecord>(line).ok()?;
        let schema = record
            .schema
            .filter(|s| s.get() != "null")
            .map(|s| schemas.entry(s.get()).or_insert_with(|| self.cache.get_or_compile_text(s.get())).clone());
        let call = record.into_call();
        let outcome = self.repair_with(&call, schema);
        serde_json::to_writer(&mut *out, &ResultLine::new(&call, &outcome)).ok()?;
        out.push(b'\n');
        Some(outcome.status)
    }

    /// A line that is not a plain record: a transcript line, a tools record, or a bad line.
    fn line_in_order(
        &self,
        line: &str,
        index: usize,
        ordered: &mut InOrder<'_>,
        out: &mut impl Write,
        diagnostics: &mut impl Write,
    ) -> io::Result<()> {
        let InOrder { source, learned, requests, summary } = ordered;
        if line.trim().is_empty() {
            return Ok(());
        }
        // Lone surrogate escapes (JavaScript writes them) are read as U+FFFD to read the line;
        // a call whose raw then holds one is refused, never repaired with the stand-in.
        let (parsed, lossy, request) = match transcript::parse_value(line) {
            Ok((value, lossy)) => {
                requests.add_tool_lists(&value);
                let request = value["requestRef"].as_str().map(String::from);
                (classify(value), lossy, request)
            }
            Err(error) => (Err(LineError::from(error)), false, None),
        };
        match parsed {
            Err(message) => {
                summary.bad_lines += 1;
                writeln!(diagnostics, "{source}:{}: {message}", index + 1)?;
            }
            Ok(Line::Tools(value)) => learned.add_all(tool_list(&value).unwrap_or_default(), Some(&self.cache)),
            Ok(Line::Nothing) => {}
            Ok(Line::Calls(calls)) => {
                // An assistant line naming its request is judged by that request's tool list.
                let tools = match &request {
                    Some(request) => requests.tools_of_request(request),
                    None => Ok(&*learned),
                };
                for call in &calls {
                    let lone_surrogate = lossy && call.raw.contains('\u{fffd}');
                    let outcome = transcript::repair_call(self, call, tools.clone(), None, lone_surrogate);
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
        let declared_len = match &call.declared_len {
            DeclaredLen::Absent => None,
            DeclaredLen::Chars(n) => Some(*n),
            DeclaredLen::Unreadable(len) => {
                let message = format!("the recorded len {len} is not a count of chars: the input may have been cut");
                return Outcome::refused(Refusal::new(RefusalCode::Truncated, message, Some(call.raw.len())));
            }
        };
        let options = RepairOptions { stop_reason, declared_len, tool: call.tool.clone(), ..RepairOptions::default() };
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
    use super::lines::BATCH_LINES;
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
