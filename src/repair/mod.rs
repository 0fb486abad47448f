//! The repair ladder: strict JSON → JSON5 → grammar-guided lenient parse → schema alignment →
//! validation. Valid input is never changed; a repair is handed on only if it validates;
//! everything doubtful is refused so the original bytes go through unchanged.

mod align;
pub mod edit;
pub mod lenient;
mod lexeme;
pub mod outcome;

pub use edit::{Edit, EditKind};
pub use outcome::{Outcome, Refusal, RefusalCode, Status};

use crate::schema::{ShapeSet, ToolSchema};
use align::Aligner;
use lenient::{parse_document, Node, ParseOptions};
use serde_json::{Map, Value};

/// Limits and context for one repair.
#[derive(Debug, Clone)]
pub struct RepairOptions {
    /// The message's stop reason; `max_tokens` means the input was cut and is never repaired.
    pub stop_reason: Option<String>,
    /// The input's full length in UTF-16 units when only a prefix was recorded (the CLI keeps
    /// the first 2048 chars of an unparsed input).
    pub declared_len: Option<usize>,
    /// Inputs longer than this (bytes) are refused.
    pub max_input_bytes: usize,
    pub parse: ParseOptions,
}

impl Default for RepairOptions {
    fn default() -> Self {
        Self { stop_reason: None, declared_len: None, max_input_bytes: 4 << 20, parse: ParseOptions::default() }
    }
}

/// How the CLI reads a finished tool input: one leading BOM dropped, `""` and `null` as `{}`.
pub fn parse_as_cli(raw: &str) -> Option<Value> {
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    if text.is_empty() {
        return Some(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Null => Some(Value::Object(Map::new())),
        value => Some(value),
    }
}

/// Whether the CLI would parse `raw`, without building the value (the sidecar's hot path).
pub fn is_valid_for_cli(raw: &str) -> bool {
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    text.is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Repairs one tool input against its schema (or, without one, in generic mode).
pub fn repair(raw: &str, schema: Option<&ToolSchema>, options: &RepairOptions) -> Outcome {
    if let Some(value) = parse_as_cli(raw) {
        return Outcome::valid(value);
    }
    match repair_invalid(raw, schema, options) {
        Ok((value, edits)) => Outcome::repaired(value, edits),
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
    let dialect = json5_reading(raw, options);
    let lenient = lenient_reading(raw, shapes, options);
    let validates = |value: &Value| violation(value, schema).is_none();
    let (value, edits, tree) = match (dialect, lenient) {
        (Some(json5), Ok((value, edits, tree))) if json5 == value => (value, edits, Some(tree)),
        (Some(json5), Ok((value, edits, tree))) => match (validates(&json5), validates(&value)) {
            (true, true) => {
                return Err(Refusal::new(
                    RefusalCode::Ambiguous,
                    "JSON5 and the lenient grammar read the input differently",
                    None,
                ))
            }
            (true, false) => (json5, vec![Edit::new(EditKind::Json5Dialect, 0..raw.len(), "")], None),
            _ => (value, edits, Some(tree)),
        },
        (_, Err(refusal)) if refusal.code == RefusalCode::Ambiguous => return Err(refusal),
        (Some(json5), Err(_)) => (json5, vec![Edit::new(EditKind::Json5Dialect, 0..raw.len(), "")], None),
        (None, Ok((value, edits, tree))) => (value, edits, Some(tree)),
        (None, Err(refusal)) => return Err(refusal),
    };
    if let Some((pointer, message)) = violation(&value, schema) {
        let position = tree.map(|t| t.at_pointer(&pointer).span.start);
        let at = if pointer.is_empty() { "the input".to_string() } else { format!("'{pointer}'") };
        return Err(Refusal::new(RefusalCode::SchemaMismatch, format!("{at}: {message}"), position));
    }
    Ok((value, edits))
}

fn refuse_cut_or_oversized(raw: &str, options: &RepairOptions) -> Result<(), Refusal> {
    if options.stop_reason.as_deref() == Some("max_tokens") {
        return Err(Refusal::new(RefusalCode::Truncated, "the tool input was cut by max_tokens", Some(raw.len())));
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
/// (JSON5 would silently drop it).
fn json5_reading(raw: &str, options: &RepairOptions) -> Option<Value> {
    if bracket_depth(raw) > options.parse.max_depth
        || raw.contains("NaN")
        || raw.contains("Infinity")
        || has_identity_escape(raw)
    {
        return None;
    }
    json5::from_str::<Value>(raw).ok().filter(Value::is_object)
}

/// Rungs 3 and 4: the lenient tree, its rival objects compared, aligned to the schema.
fn lenient_reading(raw: &str, shapes: &ShapeSet, options: &RepairOptions) -> Result<(Value, Vec<Edit>, Node), Refusal> {
    let document = parse_document(raw, shapes, options.parse).map_err(|e| e.into_refusal())?;
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
    Ok((value, edits, document.root))
}

/// The first schema violation, or `None`; without a schema any object is acceptable.
fn violation(value: &Value, schema: Option<&ToolSchema>) -> Option<(String, String)> {
    match schema {
        Some(schema) => schema.first_violation(value),
        None => (!value.is_object()).then(|| (String::new(), "tool input must be an object".to_string())),
    }
}

/// A backslash followed by something that is not a JSON escape (nor a line break or `'`).
fn has_identity_escape(raw: &str) -> bool {
    let mut bytes = raw.bytes();
    while let Some(byte) = bytes.next() {
        if byte == b'\\' {
            match bytes.next() {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u' | b'\'' | b'\n' | b'\r') => {}
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
