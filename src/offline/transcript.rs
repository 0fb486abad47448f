//! A Claude Code transcript read one line at a time (a bad line costs only itself), and what
//! its lines say about the calls in it: which tool list each request was sent with, the stop
//! reason of each message, and which tool_use ids it holds more than once.

use super::record::Call;
use super::stops::MessageStops;
use super::{Repairer, ToolCatalog};
use crate::repair::{Outcome, Refusal, RefusalCode};
use crate::schema::{tool_list, SchemaCache};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::ops::Range;

const BOM: &str = "\u{feff}";

/// One transcript line: its bytes as they were (without the `\n`) and what they read as.
pub struct TranscriptLine<'t> {
    /// 1-based, as reported.
    pub number: usize,
    pub bytes: &'t [u8],
    pub read: Result<ReadLine<'t>, String>,
}

/// A line that read as JSON.
pub struct ReadLine<'t> {
    /// The line's text for parsing: a first line's BOM left out (it stays in the bytes).
    pub text: &'t str,
    /// Where `text` starts in the line's bytes.
    pub offset: usize,
    pub value: Value,
    /// Lone surrogate escapes were read as U+FFFD to parse the line: a call whose input holds
    /// one cannot be repaired without changing it.
    pub lossy: bool,
}

/// The lines of `bytes`, split on `\n` (a `\r` before it is JSON whitespace); blank lines
/// (the piece after a final newline among them) read as `Ok(None)`.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = TranscriptLine<'_>> {
    bytes.split(|&b| b == b'\n').enumerate().map(|(index, bytes)| TranscriptLine {
        number: index + 1,
        bytes,
        read: read_line(bytes, index == 0),
    })
}

/// A whole transcript read in two passes: the first indexes every line (each value dropped as
/// soon as it is indexed, so memory stays near the file's size); the second reads again only the
/// lines `wanted` picked in the first, and those that could not be read (for their message).
pub struct TwoPasses<'t> {
    bytes: &'t [u8],
    pub index: TranscriptIndex,
    again: Vec<bool>,
}

/// One line of the second pass: its number and bytes, and what it reads as if it was picked
/// (or could not be read); `None` for a line of no further interest.
pub type SecondLook<'t> = (usize, &'t [u8], Option<Result<ReadLine<'t>, String>>);

impl<'t> TwoPasses<'t> {
    pub fn new(bytes: &'t [u8], wanted: impl Fn(&Value) -> bool) -> Self {
        let mut index = TranscriptIndex::default();
        let again = lines(bytes)
            .map(|line| match &line.read {
                Ok(read) => {
                    index.add(&read.value);
                    wanted(&read.value)
                }
                Err(_) => true,
            })
            .collect();
        Self { bytes, index, again }
    }

    /// Every line again, in order.
    pub fn lines(&self) -> impl Iterator<Item = SecondLook<'t>> + '_ {
        let pieces = self.bytes.split(|&b| b == b'\n').zip(&self.again).enumerate();
        pieces.map(|(index, (bytes, &again))| (index + 1, bytes, again.then(|| read_line(bytes, index == 0))))
    }

    /// How many lines there are (the piece after a final newline counted).
    pub fn line_count(&self) -> usize {
        self.again.len()
    }
}

/// Whether `line` is a transcript line with a tool_use block (`unparsed`: one whose input did
/// not parse) in its message's content.
pub fn has_tool_use(line: &Value, unparsed: bool) -> bool {
    let blocks = line["message"]["content"].as_array().into_iter().flatten();
    blocks.filter(|b| b["type"] == "tool_use").any(|b| !unparsed || b["input"].get("__unparsedToolInput").is_some())
}

/// Whether a line holds nothing but blanks.
pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

fn read_line(bytes: &[u8], first: bool) -> Result<ReadLine<'_>, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 (invalid byte at offset {} of the line): skipped", e.valid_up_to()))?;
    let (text, offset) = match text.strip_prefix(BOM).filter(|_| first) {
        Some(rest) => (rest, BOM.len()),
        None => (text, 0),
    };
    let (value, lossy) = parse_value(text).map_err(|error| format!("not JSON: {error}"))?;
    Ok(ReadLine { text, offset, value, lossy })
}

/// A JSON text, with lone surrogate escapes (which JavaScript writes, and `serde_json` refuses)
/// read as U+FFFD when there is no other way to read it.
pub fn parse_value(text: &str) -> Result<(Value, bool), serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(value) => Ok((value, false)),
        Err(error) => match without_lone_surrogates(text) {
            Some(clean) => serde_json::from_str(&clean).map(|value| (value, true)).map_err(|_| error),
            None => Err(error),
        },
    }
}

/// Whether `text` holds a `\uD800`-`\uDFFF` escape that is not half of a pair.
pub fn has_lone_surrogate(text: &str) -> bool {
    without_lone_surrogates(text).is_some()
}

/// `text` with each lone surrogate escape spelled `\ufffd`; `None` if it has none.
fn without_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let escape_at = |at: usize| -> Option<u32> {
        let hex = bytes.get(at..at + 6)?;
        if &hex[..2] != b"\\u" {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut out: Option<String> = None;
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        let Some(unit) = escape_at(at) else {
            at += 2; // Any other escape: its second byte is never the start of one.
            continue;
        };
        let paired =
            (0xD800..0xDC00).contains(&unit) && escape_at(at + 6).is_some_and(|low| (0xDC00..0xE000).contains(&low));
        if paired {
            at += 12;
        } else if (0xD800..0xE000).contains(&unit) {
            let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..at]);
            out.push_str("\\ufffd");
            at += 6;
            copied = at;
        } else {
            at += 6;
        }
    }
    out.map(|mut out| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Where each content block's `input` is in a line's text, block by block (`None` for a block
/// without one); `None` where the line's structure cannot be read that way (a key given twice).
pub fn input_spans(text: &str) -> Option<Vec<Option<Range<usize>>>> {
    #[derive(Deserialize)]
    struct LineSpans<'a> {
        #[serde(borrow)]
        message: MessageSpans<'a>,
    }
    #[derive(Deserialize)]
    struct MessageSpans<'a> {
        #[serde(borrow)]
        content: Vec<BlockSpans<'a>>,
    }
    #[derive(Deserialize)]
    struct BlockSpans<'a> {
        #[serde(borrow, default)]
        input: Option<&'a RawValue>,
    }
    let line: LineSpans = serde_json::from_str(text).ok()?;
    let start = text.as_ptr() as usize;
    let span = |raw: &RawValue| {
        let at = raw.get().as_ptr() as usize - start;
        at..at + raw.get().len()
    };
    Some(line.message.content.iter().map(|block| block.input.map(span)).collect())
}

/// One unparsed call of a transcript repaired with `tools`, unless the transcript (`index`, when
/// the whole of it is known) cannot say which call it is (its id is carried by more than one
/// block) or what its input was (a lone surrogate, which no Rust string holds).
pub fn repair_call(
    repairer: &Repairer,
    call: &Call,
    tools: Result<&ToolCatalog, MissingTools>,
    index: Option<&TranscriptIndex>,
    input_has_lone_surrogate: bool,
) -> Outcome {
    if let Some(id) = call.id.as_deref().filter(|id| index.is_some_and(|index| index.is_duplicate(id))) {
        let message = format!(
            "tool_use id {id} is carried by more than one block of the transcript: which is meant cannot be told"
        );
        return Outcome::refused(Refusal::new(RefusalCode::Ambiguous, message, None));
    }
    if input_has_lone_surrogate {
        let message = "the recorded input holds a lone surrogate escape, which cannot be kept in a repair";
        return Outcome::refused(Refusal::new(RefusalCode::Syntax, message, None));
    }
    match tools {
        Ok(tools) => repairer.repair_call(call, tools),
        // The user's `--tools` still applies.
        Err(_) if call.tool.as_deref().is_some_and(|tool| repairer.knows(tool, &ToolCatalog::default())) => {
            repairer.repair_call(call, &ToolCatalog::default())
        }
        Err(MissingTools(why)) => {
            let tool = call.tool.as_deref().unwrap_or("?");
            let message = format!("no schema recorded for tool '{tool}': {why}");
            Outcome::refused(Refusal::new(RefusalCode::UnusableSchema, message, None))
        }
    }
}

/// Why the schemas for a call are not the transcript's to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingTools(pub String);

/// What a whole transcript says about its calls, read in one pass over its lines.
pub struct TranscriptIndex {
    /// Each recorded tool list by its `shapeHash`.
    shapes: HashMap<String, ToolCatalog>,
    /// Each request's `shapeHash`, by the request's id (an assistant line's `requestRef`).
    requests: HashMap<String, Option<String>>,
    /// Every tool list read, merged, for lines that name no request (older transcripts).
    merged: ToolCatalog,
    pub stops: MessageStops,
    /// For each tool_use id: its tool's name, its line's request, and how many assistant
    /// blocks carry it.
    tool_uses: HashMap<String, ToolUse>,
    /// Each distinct schema compiled once, however many tool lists repeat it.
    cache: SchemaCache,
}

impl Default for TranscriptIndex {
    fn default() -> Self {
        Self {
            shapes: HashMap::new(),
            requests: HashMap::new(),
            merged: ToolCatalog::default(),
            stops: MessageStops::default(),
            tool_uses: HashMap::new(),
            cache: SchemaCache::new(256),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct ToolUse {
    name: Option<String>,
    request: Option<String>,
    blocks: usize,
}

impl TranscriptIndex {
    pub fn add(&mut self, line: &Value) {
        if !self.add_tool_lists(line) {
            self.add_calls(line);
        }
    }

    /// A line's tool list or request, if it is one of those; whether it was.
    pub fn add_tool_lists(&mut self, line: &Value) -> bool {
        match line["type"].as_str() {
            Some("api-request-shape") => {
                let list = tool_list(line).unwrap_or_default();
                let mut catalog = ToolCatalog::default();
                catalog.add_all(list, Some(&self.cache));
                self.merged.add_all(list, Some(&self.cache));
                if let Some(hash) = line["shapeHash"].as_str() {
                    self.shapes.insert(hash.to_string(), catalog);
                }
            }
            Some("api-request") => {
                if let Some(id) = line["id"].as_str() {
                    self.requests.insert(id.to_string(), line["shapeHash"].as_str().map(String::from));
                }
            }
            _ => return false,
        }
        true
    }

    fn add_calls(&mut self, line: &Value) {
        if line["type"] != "assistant" {
            return;
        }
        self.stops.add(line);
        let request = line["requestRef"].as_str().map(String::from);
        for block in line["message"]["content"].as_array().into_iter().flatten() {
            let (Some("tool_use"), Some(id)) = (block["type"].as_str(), block["id"].as_str()) else { continue };
            let entry = self.tool_uses.entry(id.to_string()).or_default();
            entry.blocks += 1;
            entry.name = block["name"].as_str().map(String::from);
            entry.request = request.clone();
        }
    }

    /// The tool name of tool_use `id`.
    pub fn name_of(&self, id: &str) -> Option<&str> {
        self.tool_uses.get(id)?.name.as_deref()
    }

    /// Whether more than one assistant block carries tool_use `id`: which one a hook or a copy
    /// means cannot be told.
    pub fn is_duplicate(&self, id: &str) -> bool {
        self.tool_uses.get(id).is_some_and(|t| t.blocks > 1)
    }

    /// The tools of the request `line` (an assistant line) answered: the tool list its
    /// `requestRef` names through the request's `shapeHash`. A line that names no request reads
    /// every tool list so far, merged (`so_far`, kept by the caller in line order).
    pub fn tools_of_line<'a>(&'a self, line: &Value, so_far: &'a ToolCatalog) -> Result<&'a ToolCatalog, MissingTools> {
        match line["requestRef"].as_str() {
            Some(request) => self.tools_of_request(request),
            None => Ok(so_far),
        }
    }

    /// The tools sent with the request that produced tool_use `id` (a copy of its message in
    /// a later request names no request of its own).
    pub fn tools_of_tool_use<'a>(&'a self, id: &str, so_far: &'a ToolCatalog) -> Result<&'a ToolCatalog, MissingTools> {
        match self.tool_uses.get(id).and_then(|t| t.request.as_deref()) {
            Some(request) => self.tools_of_request(request),
            None => Ok(so_far),
        }
    }

    /// The index's compiled schemas, for a caller's own catalog of the same lists.
    pub fn cache(&self) -> &SchemaCache {
        &self.cache
    }

    /// Every tool list read, merged: for a call whose line names no request.
    pub fn merged(&self) -> &ToolCatalog {
        &self.merged
    }

    /// The tools sent with request `request`: the tool list its `shapeHash` names.
    pub fn tools_of_request(&self, request: &str) -> Result<&ToolCatalog, MissingTools> {
        let hash = match self.requests.get(request) {
            None => return Err(MissingTools(format!("the request {request} is not in the transcript"))),
            Some(None) => return Err(MissingTools(format!("the request {request} records no shapeHash"))),
            Some(Some(hash)) => hash,
        };
        self.shapes.get(hash).ok_or_else(|| {
            MissingTools(format!("the tool list {hash} that request {request} names is not in the transcript"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_read_as_replacement_characters_and_pairs_are_kept() {
        let (value, lossy) = parse_value(r#"{"a": "x\ud800y", "b": "\ud83d\ude00", "c": "\\ud800"}"#).unwrap();
        assert!(lossy);
        assert_eq!(value["a"], "x\u{fffd}y");
        assert_eq!(value["b"], "\u{1f600}");
        assert_eq!(value["c"], "\\ud800");
        assert!(!parse_value(r#"{"b": "\ud83d\ude00", "c": "\\ud800"}"#).unwrap().1);
        assert!(has_lone_surrogate(r#""\udc00""#) && !has_lone_surrogate(r#""\\udc00""#));
    }

    #[test]
    fn a_line_not_utf8_is_a_problem_of_its_own_and_a_bom_is_read_past() {
        let bytes = b"\xef\xbb\xbf{\"a\":1}\n{\"b\":\xff}\n{\"c\":3}\n";
        let read: Vec<_> = lines(bytes).collect();
        assert_eq!(read.len(), 4);
        let first = read[0].read.as_ref().unwrap();
        assert_eq!((first.offset, first.value["a"].as_i64()), (3, Some(1)));
        assert!(read[1].read.as_ref().err().unwrap().starts_with("not UTF-8"));
        assert_eq!(read[2].read.as_ref().unwrap().value["c"], 3);
        assert!(is_blank(read[3].bytes));
    }
}
