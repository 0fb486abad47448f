//! The repair ladder: strict JSON → JSON5 → grammar-guided lenient parse → schema alignment →
//! validation. Valid input is never changed; a repair is handed on only if it validates;
//! everything doubtful is refused so the original bytes go through unchanged.

mod align;
mod call_name;
mod coerce;
mod decoded_escapes;
pub mod edit;
mod envelope;
mod foreign;
mod json5_reading;
pub mod lenient;
mod lexeme;
mod numeral;
pub mod outcome;
mod readings;
mod stop;

pub use edit::{Edit, EditKind};
pub use outcome::{Outcome, Refusal, RefusalCode, Status};
pub use stop::StopReason;

use crate::schema::{ShapeSet, ToolSchema};
use align::Aligner;
use lenient::{parse_reading, Choices, Document, KeptMember, ParseOptions};
use readings::{Reading, Readings};
use serde_json::{Map, Value};

/// Readings walked per input at most; fewer for large inputs (see [`MAX_PARSED_BYTES`]).
const MAX_READINGS: usize = 64;
const MIN_READINGS: usize = 4;
/// Bytes parsed across all readings of one input, past which the walk stops (and refuses).
const MAX_PARSED_BYTES: usize = 32 << 20;

/// Limits and context for one repair.
#[derive(Debug, Clone)]
pub struct RepairOptions {
    /// The message's stop reason. Anything but a normal end of the block (`tool_use`,
    /// `end_turn`, `pause_turn`) means the input may be cut: never repaired.
    /// `None` when it is not known (an offline record without one).
    pub stop_reason: Option<String>,
    /// The input's full length in UTF-16 units when only a prefix was recorded (the CLI keeps
    /// the first 2048 chars of an unparsed input).
    pub declared_len: Option<usize>,
    /// Inputs longer than this (bytes) are refused.
    pub max_input_bytes: usize,
    pub parse: ParseOptions,
    /// The tool's name, when known: a call envelope (`{"name": …, "parameters": {…}}`) around
    /// the input is taken off only when it names this tool.
    pub tool: Option<String>,
}

impl Default for RepairOptions {
    fn default() -> Self {
        Self {
            stop_reason: None,
            declared_len: None,
            max_input_bytes: 4 << 20,
            parse: ParseOptions::default(),
            tool: None,
        }
    }
}

/// How the CLI reads a finished tool input: one leading BOM dropped, `""` and `null` as `{}`.
pub fn parse_as_cli(raw: &str) -> Option<Value> {
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    if text.is_empty() {
        return Some(Value::Object(Map::new()));
    }
    let parsed = serde_json::from_str::<Value>(text)
        .ok()
        .or_else(|| serde_json::from_str::<Value>(&without_lone_surrogates(text)?).ok())?;
    match parsed {
        Value::Null => Some(Value::Object(Map::new())),
        value => Some(value),
    }
}

/// Whether the CLI would parse `raw`, without building the value (the sidecar's hot path).
pub fn is_valid_for_cli(raw: &str) -> bool {
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    text.is_empty()
        || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
        || without_lone_surrogates(text).is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(&t).is_ok())
}

/// `text` with each `\u` escape of an unpaired surrogate replaced by `\ufffd`, if it has any:
/// JavaScript's `JSON.parse` (the CLI's) takes them, serde_json does not. A model that cuts an
/// emoji's pair (`\ud83d`) wrote input the CLI runs, so it is valid, not broken.
pub(crate) fn without_lone_surrogates(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let escape_at = |i: usize| -> Option<u16> {
        let hex = text.get(i + 2..i + 6)?;
        (bytes.get(i + 1) == Some(&b'u')).then(|| u16::from_str_radix(hex, 16).ok()).flatten()
    };
    let (mut out, mut copied, mut i, mut changed) = (String::new(), 0, 0, false);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(i) else {
            i += 2;
            continue;
        };
        let paired = match unit {
            0xD800..=0xDBFF => {
                bytes.get(i + 6) == Some(&b'\\') && escape_at(i + 6).is_some_and(|n| (0xDC00..=0xDFFF).contains(&n))
            }
            0xDC00..=0xDFFF => false,
            _ => {
                i += 6;
                continue;
            }
        };
        if paired {
            i += 12;
            continue;
        }
        out.push_str(&text[copied..i]);
        out.push_str("\\ufffd");
        i += 6;
        copied = i;
        changed = true;
    }
    changed.then(|| out + &text[copied..])
}

/// Repairs one tool input against its schema (or, without one, in generic mode).
pub fn repair(raw: &str, schema: Option<&ToolSchema>, options: &RepairOptions) -> Outcome {
    if let Some(value) = parse_as_cli(raw) {
        let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
        if !text.is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
            // Read only through the unpaired-surrogate fallback: valid as it is, or left as it
            // is, never coerced (the text serde_json itself does not read is not taken apart).
            return match schema.and_then(|schema| schema.first_violation(&value)) {
                None => Outcome::valid(value),
                Some((pointer, message)) => Outcome::invalid(
                    value,
                    Refusal::new(RefusalCode::SchemaMismatch, format!("'{pointer}': {message}"), None),
                ),
            };
        }
        return match schema {
            Some(schema) => {
                decoded_escapes::refuse_decoded_backslashes(raw, coerce::coerce(raw, value, schema, options))
            }
            None => Outcome::valid(value),
        };
    }
    match repair_invalid(raw, schema, options) {
        Ok((value, edits)) => decoded_escapes::refuse_decoded_backslashes(raw, Outcome::repaired(value, edits)),
        Err(refusal) => Outcome::refused(refusal),
    }
}

fn repair_invalid(
    raw: &str,
    schema: Option<&ToolSchema>,
    options: &RepairOptions,
) -> Result<(Value, Vec<Edit>), Refusal> {
    refuse_cut_or_oversized(raw, options)?;
    let generic;
    let shapes = match schema {
        Some(schema) => schema.shapes(),
        None => {
            generic = ShapeSet::generic();
            &generic
        }
    };
    let mut readings = Readings::new(schema, options.tool.as_deref());
    if raw.trim().is_empty() {
        // Only whitespace: no parameters at all, if the tool takes none.
        let edits = vec![Edit::new(EditKind::EmptyInput, 0..raw.len(), "")];
        readings.offer(Reading { value: Value::Object(Map::new()), edits, tree: None })?;
        return readings.decide();
    }
    // In input written as foreign call syntax, a JSON object inside a parameter's value is not
    // a call with text around it; elsewhere such text refuses the whole input.
    let foreign = foreign::is_foreign_call(raw);
    lenient_readings(raw, shapes, options, !foreign, &mut readings)?;
    foreign::offer(raw, shapes, options.parse, options.tool.as_deref(), &mut readings)?;
    if let Some(value) = json5_reading(raw, options)? {
        let edits = vec![Edit::new(EditKind::Json5Dialect, 0..raw.len(), "")];
        readings.offer(Reading { value, edits, tree: None })?;
    }
    readings.decide()
}

fn refuse_cut_or_oversized(raw: &str, options: &RepairOptions) -> Result<(), Refusal> {
    if let Some(reason) = options.stop_reason.as_deref().map(StopReason::parse) {
        if !reason.ends_block_normally() {
            return Err(Refusal::new(
                RefusalCode::Truncated,
                format!("stop reason '{}': the tool input may have been cut", reason.as_str()),
                Some(raw.len()),
            ));
        }
    }
    if let Some(declared) = options.declared_len {
        let recorded = raw.encode_utf16().count();
        if recorded < declared {
            return Err(Refusal::new(
                RefusalCode::Truncated,
                format!("only the first {recorded} of {declared} chars were recorded"),
                Some(raw.len()),
            ));
        }
    }
    if raw.len() > options.max_input_bytes {
        return Err(Refusal::new(
            RefusalCode::TooLarge,
            format!("input of {} bytes is over the {} byte limit", raw.len(), options.max_input_bytes),
            None,
        ));
    }
    Ok(())
}

/// Rung 2: the standard JSON5 dialect. Skipped where the `json5` crate could recurse too deep,
/// where `NaN`/`Infinity` would silently become `null`, and where a backslash escapes nothing
/// (JSON5 would silently drop it). Refused where it reads an escape JSON lacks (`"x\vy"`).
fn json5_reading(raw: &str, options: &RepairOptions) -> Result<Option<Value>, Refusal> {
    if bracket_depth(raw) > options.parse.max_depth
        || raw.contains("NaN")
        || raw.contains("Infinity")
        || has_identity_escape(raw)
    {
        return Ok(None);
    }
    let Some(value) = json5_reading::read(raw) else {
        return Ok(None);
    };
    match json5_reading::escape_json_lacks(raw) {
        // The lenient reading keeps the backslash, as a model copying a path meant it; JSON5's
        // reads a vertical tab, a NUL, a character: two readings (attack round 26: `"x\vy",}`).
        Some(at) => Err(Refusal::new(
            RefusalCode::Ambiguous,
            "an escape JSON lacks (`\\v`, `\\0`, `\\x41`) in input read as JSON5: the escape, or a backslash of the text",
            Some(at),
        )),
        None => Ok(Some(value)),
    }
}

/// Rungs 3 and 4: every reading the lenient grammar admits (each script of answers at its
/// choice points), aligned to the schema and offered. A parse that finds the text ambiguous,
/// cut or too deep refuses the whole input: that reading cannot be ruled out.
fn lenient_readings(
    raw: &str,
    shapes: &ShapeSet,
    options: &RepairOptions,
    text_outside_refuses: bool,
    readings: &mut Readings,
) -> Result<(), Refusal> {
    let mut choices = Choices::default();
    let budget = (MAX_PARSED_BYTES / raw.len().max(1)).clamp(MIN_READINGS, MAX_READINGS);
    for _ in 0..budget {
        match parse_reading(raw, shapes, options.parse, options.tool.as_deref(), &mut choices) {
            Ok(mut document) => {
                let members = std::mem::take(&mut document.text_as_member);
                let kept_as_text = document.key_kept_as_text;
                let kept_in_nested = std::mem::take(&mut document.kept_in_nested);
                match align_document(document, shapes) {
                    Ok(reading) => {
                        if let Some(why) = broken_by_members(readings, &reading.value, &members) {
                            readings.doubt(why);
                        }
                        if let Some(why) = broken_where_kept(readings, shapes, &reading.value, &kept_in_nested) {
                            readings.doubt(why);
                        }
                        if let Some(at) = kept_as_text.filter(|_| readings.violation(&reading.value).is_none()) {
                            // It fits only by keeping a member's shape as text.
                            readings.doubt(format!("a member's shape kept as text at byte {at}"));
                        }
                        readings.offer(reading)?
                    }
                    Err(refusal) if refusal.code == RefusalCode::Ambiguous => return Err(refusal),
                    Err(refusal) => {
                        if members.iter().any(|name| blames(name, "", &refusal.message)) {
                            readings.doubt(format!("the schema rejects it: {}", refusal.message));
                        }
                        readings.fail(refusal)
                    }
                }
            }
            Err(error) if decisive(error.code) || (text_outside_refuses && error.code == RefusalCode::TextOutside) => {
                return Err(error.into_refusal())
            }
            Err(error) => readings.fail(error.into_refusal()),
        }
        if !choices.advance() {
            return Ok(());
        }
    }
    Err(Refusal::new(RefusalCode::Ambiguous, format!("the input admits more than {budget} readings"), None))
}

/// Refusals one reading makes for the whole input.
/// Why `value` breaks the schema, if it does so because of the members taken from text:
/// with them taken out the complaint changes, or it names one of them.
fn broken_by_members(readings: &Readings, value: &Value, members: &[String]) -> Option<String> {
    if members.is_empty() {
        return None;
    }
    let (pointer, message) = readings.violation(value)?;
    let unchanged =
        readings.violation(&without_members(value, members)).as_ref() == Some(&(pointer.clone(), message.clone()));
    (!unchanged || members.iter().any(|name| blames(name, &pointer, &message)))
        .then(|| format!("the schema rejects it: '{pointer}': {message}"))
}

/// Why `value` breaks the schema at a member kept in a nested object whose `}` may have been
/// lost before it (`"settings": {"retries": 3, "mode": "debug"` where only the top level takes
/// `debug`; a key the nested object does not take): the model may have meant it there, so a
/// reading moving it out is not the only one.
fn broken_where_kept(readings: &Readings, shapes: &ShapeSet, value: &Value, kept: &[KeptMember]) -> Option<String> {
    let at = |member: &KeptMember| format!("{}/{}", member.parent, crate::schema::escape_pointer(&member.name));
    let rejected = kept.iter().find(|member| match (member.declared, value.pointer(&at(member))) {
        (Some(shape), Some(item)) => !shapes.may_take(shape, item),
        _ => false,
    });
    if let Some(member) = rejected {
        return Some(format!("'{}' kept in '{}' breaks its schema there", member.name, member.parent));
    }
    if kept.is_empty() {
        return None;
    }
    let (pointer, message) = readings.violation(value)?;
    let about = |member: &KeptMember| {
        let member_at = at(member);
        pointer == member_at
            || pointer.starts_with(&format!("{member_at}/"))
            || (pointer == member.parent && message.contains(&format!("'{}'", member.name)))
    };
    kept.iter().any(about).then(|| format!("kept in the nested object it breaks the schema: '{pointer}': {message}"))
}

/// `value` without the members taken from text, wherever they are: if the schema's complaint
/// changes with them gone, it was about them (whatever words the validator uses).
fn without_members(value: &Value, names: &[String]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| !names.contains(key))
                .map(|(key, item)| (key.clone(), without_members(item, names)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|item| without_members(item, names)).collect()),
        other => other.clone(),
    }
}

/// Whether a schema violation (at `pointer`, saying `message`) is about the member `name`: at
/// it or below it, or an undeclared key the message names.
fn blames(name: &str, pointer: &str, message: &str) -> bool {
    let at = format!("/{}", crate::schema::escape_pointer(name));
    pointer == at || pointer.starts_with(&format!("{at}/")) || message.contains(&format!("'{name}'"))
}

fn decisive(code: RefusalCode) -> bool {
    matches!(code, RefusalCode::Ambiguous | RefusalCode::Truncated | RefusalCode::TooDeep)
}

/// One parse aligned to the schema; its rival objects must read the same.
fn align_document(document: Document, shapes: &ShapeSet) -> Result<Reading, Refusal> {
    let aligner = Aligner::new(shapes);
    let mut edits = document.edits;
    let value = aligner.align_root(&document.root, &mut edits)?;
    for rival in &document.rivals {
        if aligner.align_root(rival, &mut Vec::new())? != value {
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                "the input holds two different objects",
                Some(rival.span.start),
            ));
        }
    }
    edits.sort_by_key(|e| (e.span[0], e.span[1]));
    Ok(Reading { value, edits, tree: Some(document.root) })
}

/// A backslash followed by something that is not a JSON escape (nor one JSON5 adds: a line
/// break, `'`, `\v`, `\0`, `\x`).
fn has_identity_escape(raw: &str) -> bool {
    let mut bytes = raw.bytes();
    while let Some(byte) = bytes.next() {
        if byte == b'\\' {
            match bytes.next() {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u') => {}
                Some(b'\'' | b'\n' | b'\r' | b'v' | b'0' | b'x') => {}
                _ => return true,
            }
        }
    }
    false
}

/// Deepest bracket nesting, counting brackets inside strings too (an upper bound).
fn bracket_depth(raw: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for byte in raw.bytes() {
        match byte {
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the ladder makes of damaged `raw` for the tool `tool` with this schema: the input
    /// handed on, or the refusal's message.
    fn repaired(raw: &str, schema: Value, tool: &str) -> Result<Value, String> {
        let schema = ToolSchema::compile(&schema).unwrap();
        let options = RepairOptions { tool: Some(tool.to_string()), ..RepairOptions::default() };
        let outcome = repair(raw, Some(&schema), &options);
        match outcome.status {
            Status::Repaired => Ok(outcome.input.unwrap()),
            _ => Err(outcome.reason.map(|r| r.message).unwrap_or_default()),
        }
    }

    fn write() -> Value {
        json!({"type": "object", "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}})
    }

    #[test]
    fn escapes_json_lacks_that_json5_or_python_read_are_refused() {
        for raw in [
            r#"{"file_path": "a.txt", "content": "x\vy",}"#,
            r#"{"file_path": "a.txt", "content": "x\x41y",}"#,
            r"{'file_path': 'D:\archive\a.txt', 'content': 'hi'}",
            r"{'file_path': 'D:\videos\intro.txt', 'content': 'hi'}",
            r"{'file_path': 'a.tsv', 'content': 'col1\vcol2'}",
            r"{'file_path': 'a.txt', 'content': 'x\7y'}",
            r"{'file_path': 'C:\1\a.txt', 'content': 'hi'}",
        ] {
            let why = repaired(raw, write(), "Write").expect_err(raw);
            assert!(why.contains("escape"), "{raw}: {why}");
        }
        let kept = [
            (
                r"{'file_path': 'D:\\videos\\a.txt', 'content': 'hi'}",
                json!({"file_path": r"D:\videos\a.txt", "content": "hi"}),
            ),
            (r"{'file_path': 'a.txt', 'content': 'it\'s'}", json!({"file_path": "a.txt", "content": "it's"})),
            (r#"{"file_path": "a.txt", "content": "x\\vy",}"#, json!({"file_path": "a.txt", "content": r"x\vy"})),
            (r#"{"file_path": "a.txt", "content": "\d+",}"#, json!({"file_path": "a.txt", "content": r"\d+"})),
        ];
        for (raw, input) in kept {
            assert_eq!(repaired(raw, write(), "Write"), Ok(input), "{raw}");
        }
    }

    #[test]
    fn damaged_input_is_not_decoded_into_numbers_a_double_cannot_hold() {
        let events = || json!({"type": "object", "properties": {"filter": {"type": "object"}}});
        let why = repaired(r#"{"filter": "{\"user_id\": 1184457398123945991}""#, events(), "list_events");
        assert!(why.expect_err("decoded").contains("cannot hold"));
        let held = repaired(r#"{"filter": "{\"user_id\": 42}""#, events(), "list_events");
        assert_eq!(held, Ok(json!({"filter": {"user_id": 42}})));

        let properties = json!({"issue_id": {"type": "integer"}, "note": {"type": "string"}});
        let issue = || json!({"type": "object", "properties": properties, "required": ["issue_id"]});
        let call = |id: &str| format!(r#"{{"name": "close_issue", "arguments": "{{\"issue_id\": {id}}}""#);
        let why = repaired(&call("9007199254740993"), issue(), "close_issue");
        assert!(why.expect_err("decoded").contains("cannot hold"));
        assert_eq!(repaired(&call("42"), issue(), "close_issue"), Ok(json!({"issue_id": 42})));
    }
}
