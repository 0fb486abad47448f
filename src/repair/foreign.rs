//! A reading of input written in one of the tool-call XML syntaxes models fall back to instead
//! of JSON: `<parameter name="K">V</parameter>`, `<parameter=K>V</parameter>` (optionally inside
//! `<function=NAME>…</function>` or `<invoke name="…">…</invoke>`), and
//! `<arg_key>K</arg_key><arg_value>V</arg_value>`. K must be a property the schema declares. V
//! is verbatim text for a string property, and also the text inside quotes that enclose all of
//! it; for other types it is read as JSON, and where JSON5 drops a backslash (`\`+line break,
//! `\'`) also with it kept: two readings, which refuse if both fit. One line break right after
//! the opening tag and one right before the closing tag belong to the syntax, as a pair, where
//! every value of the call has them (Qwen's layout); where only some do, a value that has them
//! and may be text refuses. One block is one call: a second call after it, or a wrapper naming
//! another tool (in any spelling: see `call_name`), is never read into this one. Around it, the wrappers the
//! JSON rung drops around an object (a lead-in, a fence) and a closing special token
//! (`<|im_end|>`) go; tags in all their decorations are read by `tag`.

use super::call_name;
use super::edit::{Edit, EditKind};
use super::lenient::{names_this_tool, wrapper, ParseOptions};
use super::lexeme;
use super::outcome::{Refusal, RefusalCode};
use super::readings::{Reading, Readings};
use super::RepairOptions;
use crate::schema::{escape_pointer, Shape, ShapeId, ShapeSet};
use memchr::memmem;
use serde_json::{Map, Value};
use std::ops::Range;
use tag::{extra_attributes, only_known_attributes, parameter_name, tag_at};

mod tag;

/// Combinations of per-parameter readings walked at most.
const MAX_COMBINATIONS: usize = 16;

/// One `K = V` the syntax wrote.
struct Parameter<'a> {
    key: String,
    value: &'a str,
    value_span: Range<usize>,
    kind: ValueKind,
    /// Whether the value's edge line breaks were dropped as layout the rest of the call does
    /// not follow (see [`settle_layout`]): its text with them is a second reading.
    layout_in_doubt: bool,
}

impl<'a> Parameter<'a> {
    fn new(key: String, raw: &'a str, value_span: Range<usize>, kind: ValueKind) -> Self {
        Parameter { key, value: &raw[value_span.clone()], value_span, kind, layout_in_doubt: false }
    }
}

/// What the syntax says V is: DSML's `string="true"` / `string="false"`, or nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Text,
    Json,
    Either,
}

fn value_kind(attributes: &str) -> ValueKind {
    if attributes.contains("string=\"true\"") {
        ValueKind::Text
    } else if attributes.contains("string=\"false\"") {
        ValueKind::Json
    } else {
        ValueKind::Either
    }
}

/// A value that holds the syntax's own tags (`x = 2<parameter>…`), in any spelling the parser
/// reads: a closing tag was damaged, and where the value ends is unknown.
fn holds_no_tags(raw: &str, span: &Range<usize>) -> Result<(), Refusal> {
    match tag::holds_call_tags(&raw[span.clone()]) {
        true => Err(syntax("a value holds the call syntax's own tags: a tag is damaged", span.start)),
        false => Ok(()),
    }
}

/// The first declared key that `text` holds a parameter tag for, in any of the syntaxes
/// (`<parameter name="K">`, `<parameter=K>`, `<arg_key>K</arg_key>`): text that is also a
/// reading as that syntax, the tags leaked into a value. Tags are read as loosely as the guard
/// reads them (`<Parameter NAME = K>`, `name=“K”`). Where the keys are unknown (`None`: a
/// schema or branch without properties), any key a tag names may be one. A tag naming `own`,
/// the key whose value `text` is, is not counted unless a closing tag came before it: a model
/// switching to tags goes on with the next parameter, and an XML file's content may name its
/// own (`content`).
pub fn names_declared_key(text: &str, declared: Option<&[&str]>, own: Option<&str>) -> Option<String> {
    let mut closed = false;
    tag::heads(text).find_map(|tag| {
        if tag.closing {
            closed = true;
            return None;
        }
        let key = match tag.name.as_str() {
            "parameter" => tag::loose_parameter_name(tag.attributes)?,
            "arg_key" => {
                let rest = &text[tag.end..];
                let end = memchr::memchr(b'<', rest.as_bytes())?;
                rest[..end].trim().to_string()
            }
            _ => return None,
        };
        let known = declared.is_none_or(|keys| keys.contains(&key.as_str()));
        // After a closing tag (`npm test</parameter>⏎<parameter name="command">…`) the own key
        // too starts a parameter again.
        (known && !key.is_empty() && (closed || own != Some(key.as_str()))).then_some(key)
    })
}

/// A value's text beyond its tags: no damaged closing tag, no doubled `>`, no entity.
fn reads_one_way(raw: &str, tag_end: usize, span: &Range<usize>) -> Result<(), Refusal> {
    holds_no_tags(raw, span)?;
    if raw[tag_end..].starts_with('>') {
        return Err(ambiguous(
            "a '>' right after the opening tag: a doubled delimiter, or the value's first character",
            tag_end,
        ));
    }
    match holds_entity(&raw[span.clone()]) {
        true => Err(ambiguous("the value holds an XML entity (`&gt;`, `&amp;`, …): decoded or as written", span.start)),
        false => Ok(()),
    }
}

/// Whether `text` holds `&gt;`, `&lt;`, `&amp;`, `&quot;`, `&apos;` or a numeric `&#…;`.
fn holds_entity(text: &str) -> bool {
    memchr::memchr_iter(b'&', text.as_bytes()).any(|at| {
        let body = &text.as_bytes()[at + 1..];
        let Some(end) = body.iter().take(10).position(|b| *b == b';') else {
            return false;
        };
        let name = &body[..end];
        let digits = |n: &[u8], hex: bool| {
            !n.is_empty() && n.iter().all(|b| if hex { b.is_ascii_hexdigit() } else { b.is_ascii_digit() })
        };
        match name {
            b"gt" | b"lt" | b"amp" | b"quot" | b"apos" => true,
            [b'#', b'x' | b'X', hex @ ..] => digits(hex, true),
            [b'#', decimal @ ..] => digits(decimal, false),
            _ => false,
        }
    })
}

fn ambiguous(message: &str, at: usize) -> Refusal {
    Refusal::new(RefusalCode::Ambiguous, message, Some(at))
}

/// Offers the readings of `raw` as foreign syntax, if it is written in one. Returns `Err` only
/// for a refusal that holds for the whole input (a value cut before its closing tag, two calls,
/// a value with two readings). `tool`, when known, is the name a wrapper may give.
pub fn offer(
    raw: &str,
    shapes: &ShapeSet,
    parse: ParseOptions,
    tool: Option<&str>,
    readings: &mut Readings,
) -> Result<(), Refusal> {
    if !raw.contains("parameter") && !raw.contains("arg_key") {
        return Ok(());
    }
    let parameters = match parameters(raw, tool) {
        Ok(Some(parameters)) => parameters,
        Ok(None) => return Ok(()),
        Err(refusal) if matches!(refusal.code, RefusalCode::Truncated | RefusalCode::Ambiguous) => return Err(refusal),
        Err(refusal) => {
            readings.fail(refusal);
            return Ok(());
        }
    };
    let declared = shapes.known_keys(shapes.root()).unwrap_or_default();
    let mut choices: Vec<Vec<(Value, Edit)>> = Vec::new();
    for parameter in &parameters {
        if !declared.contains(&parameter.key.as_str()) {
            readings.fail(Refusal::new(
                RefusalCode::SchemaMismatch,
                format!("parameter '{}' is not a property of the tool", parameter.key),
                Some(parameter.value_span.start),
            ));
            return Ok(());
        }
        let shape = shapes.property(shapes.root(), &parameter.key);
        let pointer = format!("/{}", escape_pointer(&parameter.key));
        let edit = Edit::new(EditKind::ForeignSyntax, parameter.value_span.clone(), pointer);
        if parameter.layout_in_doubt && reads_as_text(parameter.kind, shape, shapes) {
            return Err(ambiguous(
                &format!(
                    "the value of parameter '{}' has a line break at both tags and another value of the \
                     call has none: the syntax's layout, or the value's own?",
                    parameter.key
                ),
                parameter.value_span.start,
            ));
        }
        let values = values(parameter.value, parameter.kind, shape, shapes, parse, tool).map_err(|why| {
            ambiguous(&format!("the value of parameter '{}' {why}", parameter.key), parameter.value_span.start)
        })?;
        if values.is_empty() {
            readings.fail(Refusal::new(
                RefusalCode::SchemaMismatch,
                format!("the value of parameter '{}' does not read as its type", parameter.key),
                Some(parameter.value_span.start),
            ));
            return Ok(());
        }
        choices.push(values.into_iter().map(|v| (v, edit.clone())).collect());
    }
    let combinations: usize = choices.iter().map(Vec::len).product();
    if combinations > MAX_COMBINATIONS {
        return Err(Refusal::new(RefusalCode::Ambiguous, "the parameters admit too many readings", None));
    }
    for index in 0..combinations {
        let mut rest = index;
        let mut map = Map::new();
        let mut edits = Vec::new();
        let mut clash = None;
        for (parameter, options) in parameters.iter().zip(&choices) {
            let (value, edit) = &options[rest % options.len()];
            rest /= options.len();
            match map.get(&parameter.key) {
                Some(previous) if previous != value => clash = Some(parameter.value_span.start),
                Some(_) => {}
                None => {
                    map.insert(parameter.key.clone(), value.clone());
                }
            }
            edits.push(edit.clone());
        }
        if let Some(at) = clash {
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                "a parameter is given twice with different values",
                Some(at),
            ));
        }
        readings.offer(Reading { value: Value::Object(map), edits, tree: None })?;
    }
    Ok(())
}

/// Whether `raw` is written in a foreign call syntax from end to end (its parameters parse).
pub fn is_foreign_call(raw: &str) -> bool {
    raw.contains('<') && matches!(parameters(raw, None), Ok(Some(_)))
}

/// How a parameter's text reads at a value of shape `id`: verbatim where a string may stand,
/// as JSON where another type may. `Err` (why) when the text has two readings: JSON giving a
/// key twice, or text that starts as JSON but does not parse beside the verbatim reading.
/// `tool`, when known, is the name a call envelope in the text may give.
fn values(
    text: &str,
    kind: ValueKind,
    id: ShapeId,
    shapes: &ShapeSet,
    parse: ParseOptions,
    tool: Option<&str>,
) -> Result<Vec<Value>, &'static str> {
    let (string, other) = takes_text_and_other(shapes, id);
    let mut values = Vec::new();
    if string && kind != ValueKind::Json {
        if holds_the_arguments(text, shapes, tool) {
            return Err("is a JSON object of the tool's own keys, or a call of this tool holding one: the \
                        parameter's text, or the whole input?");
        }
        values.push(Value::String(text.to_string()));
        // `"/tmp/a b.txt"`: quotes that are the path's, or the model's around it;
        // `#!/bin/sh\nset -e`, `<![CDATA[a < b]]>`: another syntax's escaping, or the text's own.
        // A CDATA section at the value's edge with markup beside it: decoded, or as written?
        let trimmed = text.trim();
        if (trimmed.starts_with("<![CDATA[") || trimmed.ends_with("]]>")) && cdata_decoded(text).is_none() {
            return Err("a CDATA section beside other markup: its content, or the text as written");
        }
        let readings = [unquoted(text), json_unescaped(text), cdata_decoded(text), unfenced(text)];
        for inner in readings.into_iter().flatten() {
            if !values.contains(&Value::String(inner.clone())) {
                values.push(Value::String(inner));
            }
        }
    }
    if (other && kind != ValueKind::Text) || kind == ValueKind::Json {
        let text = text.trim();
        // Python's literals, as the lenient rung reads them, beside the word as text: where the
        // schema takes both (`enum: [true, "True"]`, `["null", "string"]`), two readings.
        let python = [("True", Value::Bool(true)), ("False", Value::Bool(false)), ("None", Value::Null)];
        if let Some((word, literal)) = python.iter().find(|(word, _)| *word == text) {
            for reading in [literal.clone(), Value::String(word.to_string())] {
                if !values.contains(&reading) {
                    values.push(reading);
                }
            }
        }
        // `\` before a line break, `\'`: dropped by JSON5, kept by the literal reading.
        let literal = super::json5_reading::with_literal_escapes(text);
        for (reading, primary) in [(Some(text), true), (literal.as_deref(), false)] {
            let Some(reading) = reading else { continue };
            match json_value(reading, parse) {
                // `600.000`, an id past 2^53: as a string's content is never coerced (numeral.rs).
                Ok(Some(parsed)) if !super::numeral::writes_out_exactly(reading, &parsed) => {}
                // As JSON, a string is only what the syntax said it is (`string="false"`).
                Ok(Some(parsed)) if !parsed.is_string() || kind == ValueKind::Json => {
                    if !values.contains(&parsed) {
                        values.push(parsed);
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) if primary && !values.is_empty() && text.starts_with(['[', '{']) => {
                    return Err("starts as JSON but does not parse: the text, or damaged JSON")
                }
                Err(why) if primary => return Err(why),
                Ok(None) | Err(_) => {}
            }
        }
        if let Some(list) = bare_list(text, id, shapes)?.filter(|list| !values.contains(list)) {
            values.push(list);
        }
    }
    Ok(values)
}

/// `token, machine payout, percentage` (or `[a, b]`) where only a list of strings may stand: its items, split
/// at its commas as an unquoted list in JSON is (never at blanks). Text holding quotes,
/// brackets, line breaks, escapes or a full-width comma is not read this way (where its items
/// end is another question), nor is a list with an empty item. Items that open a comment or
/// are a word for no value have two readings, as in the JSON rung.
fn bare_list(text: &str, id: ShapeId, shapes: &ShapeSet) -> Result<Option<Value>, &'static str> {
    let text = text.trim();
    // `[a, b]`: the same list in brackets, its items unquoted.
    let text = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).map_or(text, str::trim);
    if shapes.expects_list(id) && text.contains(['\u{3001}', '\u{060C}', '\u{FF0C}']) {
        return Err("holds a comma of another script (`、`, `،`, `，`): the item's text, or a separator?");
    }
    let plain = !text.contains(['"', '\'', '`', '[', ']', '{', '}', '(', ')', '<', '>', '\\', '\n', '\r']);
    if !plain || text.is_empty() || !shapes.expects_list(id) {
        return Ok(None);
    }
    if lexeme::digit_comma_digit(text) {
        return Err("holds a comma between digits (`1,000`, `3,5`): a numeral's own, or an item separator?");
    }
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().any(|item| item.is_empty()) || !shapes.may_take(shapes.items(id), &Value::String(String::new())) {
        return Ok(None);
    }
    if items.iter().any(|item| opens_a_comment(item)) {
        return Err("holds a comment marker (`//`, `/*`, `#`) at a word's start: a comment, or the item's text?");
    }
    if items.iter().any(|item| is_null_word(item)) {
        return Err(
            "holds a word for no value (`null`, `None`, `undefined`, `nil`): no value, or the word as an item?",
        );
    }
    Ok(Some(Value::Array(items.into_iter().map(|item| Value::String(item.to_string())).collect())))
}

/// Whether a word of `text` starts as a comment does (`src/*.rs /*generated*/`, `tests // dirs`,
/// `tests # dirs`; `#ops` is a word).
/// Inside a word (`src/**/*.rs`) the marker is a glob's.
fn opens_a_comment(text: &str) -> bool {
    text.split_whitespace().any(|word| word.starts_with("//") || word.starts_with("/*") || word == "#")
}

/// `null`, `None`, `undefined`, `nil` in any case: JSON's, Python's, JavaScript's and Go's or
/// Ruby's word for no value.
fn is_null_word(text: &str) -> bool {
    lexeme::is_null_word(text)
}

/// Whether a parameter's text is a JSON object whose keys are all the tool's own
/// (`<parameter name="command">{"command": "ls"}</parameter>`), or a call envelope naming this
/// tool around one (`{"name": "Bash", "arguments": {"command": "ls"}}`): the parameter's text,
/// or the whole input put in one parameter?
fn holds_the_arguments(text: &str, shapes: &ShapeSet, tool: Option<&str>) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(text.trim()) else {
        return false;
    };
    match super::envelope::envelope(&value) {
        Some(call) if names_this_tool(call.name, tool) => has_only_the_tools_keys(&call.input, shapes),
        _ => has_only_the_tools_keys(&value, shapes),
    }
}

/// Whether `value` is an object whose keys, one or more, the tool's schema all declares.
fn has_only_the_tools_keys(value: &Value, shapes: &ShapeSet) -> bool {
    let declared = shapes.known_keys(shapes.root()).unwrap_or_default();
    value.as_object().is_some_and(|map| !map.is_empty() && map.keys().all(|key| declared.contains(&key.as_str())))
}

/// The text inside the one pair of quotes that encloses all of `text`, read as JSON where the
/// quotes are JSON's: a second reading of a string value beside the verbatim one.
fn unquoted(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if let Ok(Value::String(inner)) = serde_json::from_str::<Value>(trimmed) {
        return Some(inner);
    }
    let first = trimmed.chars().next()?;
    let (open, close) = *QUOTE_PAIRS.iter().find(|(open, _)| *open == first)?;
    let inner = trimmed.strip_prefix(open)?.strip_suffix(close)?;
    (!inner.contains([open, close])).then(|| inner.to_string())
}

/// The text inside one code fence that encloses all of `text` (```` ```bash⏎ls -la⏎``` ````): the
/// model's markdown around the value, or a value that is itself a fenced block (a README's
/// snippet written to a file). A second reading beside the verbatim one, so the call is refused.
fn unfenced(text: &str) -> Option<String> {
    let trimmed = text.trim();
    let after_open = trimmed.strip_prefix("```")?;
    let body_start = after_open.find('\n')? + 1;
    let inner = after_open[body_start..].strip_suffix("```")?;
    (!inner.contains("```")).then(|| inner.strip_suffix('\n').unwrap_or(inner).to_string())
}

/// `text` read as the body of a JSON string, where it is one (every backslash starts an escape,
/// no raw quote or control character) and holds an escape other than `\b` and `\f` (regex
/// and shell text far more often): a writer JSON-escaped the value inside the tags.
fn json_unescaped(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut at = memchr::memchr_iter(b'\\', bytes);
    let mut escapes = false;
    while let Some(i) = at.next() {
        escapes |= !matches!(bytes.get(i + 1), Some(b'b' | b'f'));
        // The escaped byte is not an escape's start (`\\n` is a backslash, then `n`).
        if bytes.get(i + 1) == Some(&b'\\') {
            at.next();
        }
    }
    if !escapes {
        return None;
    }
    serde_json::from_str::<String>(&format!("\"{text}\"")).ok()
}

/// `text` with its XML CDATA sections (`<![CDATA[grep "<div" a.html]]>`) read as the text they
/// hold, where markup outside them is escaped as XML's must be (no raw `<`): a `<` outside
/// one is the text's own markup (`<script><![CDATA[…]]></script>`), and so are the sections.
fn cdata_decoded(text: &str) -> Option<String> {
    const OPEN: &str = "<![CDATA[";
    if !text.contains(OPEN) {
        return None;
    }
    let (mut rest, mut decoded) = (text, String::new());
    while let Some(at) = rest.find(OPEN) {
        let (before, section) = (&rest[..at], &rest[at + OPEN.len()..]);
        let end = section.find("]]>")?;
        if before.contains('<') {
            return None;
        }
        decoded.push_str(before);
        decoded.push_str(&section[..end]);
        rest = &section[end + 3..];
    }
    (!rest.contains('<')).then(|| decoded + rest)
}

/// Quotes a model may put around a whole value.
const QUOTE_PAIRS: [(char, char); 7] =
    [('"', '"'), ('\'', '\''), ('`', '`'), ('“', '”'), ('‘', '’'), ('«', '»'), ('＂', '＂')];

/// `text` read as a JSON number, JSON, or a JSON5 array or object; `Err` where it gives a key
/// twice (serde_json and json5 would keep the last) or its JSON5 reads only as rung 2 refuses.
fn json_value(text: &str, parse: ParseOptions) -> Result<Option<Value>, &'static str> {
    if let Some(number) = super::lexeme::json_number(text) {
        return Ok(Some(Value::Number(number)));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(_) if super::json5_reading::has_duplicate_keys(text) => Err("gives a key twice"),
        Ok(value) => Ok(Some(value)),
        Err(_) if !text.starts_with(['[', '{']) => Ok(None),
        Err(_) => {
            // Rung 2 reads an object, under its guards (depth, NaN, identity escapes and escapes
            // JSON lacks, a key given twice, re-spelled numbers): the value goes in one.
            let wrapped = format!("{{\"value\": {text}\n}}");
            let options = RepairOptions { parse, ..RepairOptions::default() };
            match super::json5_reading(&wrapped, &options) {
                Ok(Some(Value::Object(mut map))) if map.len() == 1 => Ok(map.remove("value")),
                _ if super::bracket_depth(text) <= parse.max_depth
                    && json5::from_str::<serde::de::IgnoredAny>(text).is_ok() =>
                {
                    Err("gives a key twice or re-spells a value in its JSON5")
                }
                _ => Ok(None),
            }
        }
    }
}

/// Whether a value of shape `id` may be a string, and whether it may be something else.
fn takes_text_and_other(shapes: &ShapeSet, id: ShapeId) -> (bool, bool) {
    let (mut string, mut other) = (false, false);
    visit(shapes, id, &mut |shape| match shape {
        Shape::String { .. } => string = true,
        Shape::Any => {
            string = true;
            other = true;
        }
        _ => other = true,
    });
    (string, other)
}

/// Whether a parameter's text is read verbatim, as a string, at a value of shape `id`.
fn reads_as_text(kind: ValueKind, id: ShapeId, shapes: &ShapeSet) -> bool {
    kind != ValueKind::Json && takes_text_and_other(shapes, id).0
}

fn visit(shapes: &ShapeSet, id: ShapeId, f: &mut impl FnMut(&Shape)) {
    match shapes.get(id) {
        Shape::Union(branches) => {
            for branch in branches.iter().take(32) {
                if *branch != id {
                    visit(shapes, *branch, f);
                }
            }
        }
        other => f(other),
    }
}

/// Where the text is in its one call: wrappers open, then parameters, then wrappers close.
#[derive(Default)]
struct Call<'a> {
    opened: Vec<&'a str>,
    in_parameters: bool,
    closing: bool,
}

impl<'a> Call<'a> {
    /// An opening wrapper (or `<name>`): before the first parameter only, and once per kind.
    fn open(&mut self, name: &'a str, at: usize) -> Result<(), Refusal> {
        if self.in_parameters || self.closing || self.opened.contains(&name) {
            return Err(second_call(at));
        }
        self.opened.push(name);
        Ok(())
    }

    /// Right after `<tool_call>`, before any name or parameter: where GLM writes the name.
    fn awaits_name(&self) -> bool {
        self.opened.last() == Some(&"tool_call") && !self.in_parameters && !self.closing
    }

    fn parameter(&mut self, at: usize) -> Result<(), Refusal> {
        match self.closing {
            true => Err(second_call(at)),
            false => {
                self.in_parameters = true;
                Ok(())
            }
        }
    }
}

/// Two calls in one block: call 1, call 2 and the two merged are all readings of it.
fn second_call(at: usize) -> Refusal {
    ambiguous("a second call after the first: the block holds two calls", at)
}

/// A wrapper's name (`<invoke name="X">`, `<function=X>`, `<name>X</name>`) must be this tool's.
fn names_this_call(named: &str, tool: Option<&str>, at: usize) -> Result<(), Refusal> {
    match names_this_tool(named, tool) {
        true => Ok(()),
        false => {
            Err(Refusal::new(RefusalCode::TextOutside, format!("the call is written for tool '{named}'"), Some(at)))
        }
    }
}

/// The parameters, in order; `None` when the text holds no parameter syntax at all; `Err` when
/// the syntax is broken (text between the tags, a value never closed), the block holds two
/// calls, or a wrapper names a tool other than `tool`.
fn parameters<'a>(raw: &'a str, tool: Option<&str>) -> Result<Option<Vec<Parameter<'a>>>, Refusal> {
    let mut parameters = Vec::new();
    let inside = inside_wrappers(raw, tool);
    // Offsets stay the input's: only the end is cut.
    let (raw, mut pos) = (&raw[..inside.end], inside.start);
    let mut pending_key: Option<(String, usize)> = None;
    let mut call = Call::default();
    while pos < raw.len() {
        let Some(offset) = raw[pos..].find('<') else {
            outside(raw, pos..raw.len())?;
            break;
        };
        let text = raw[pos..pos + offset].trim();
        if call.awaits_name() && lexeme::identifier_len(text) == Some(text.len()) && !text.is_empty() {
            // GLM's `<tool_call>Grep⏎<arg_key>…`: the tool's name as text after the envelope.
            call.open("name", pos)?;
            names_this_call(text, tool, pos)?;
        } else {
            outside(raw, pos..pos + offset)?;
        }
        let start = pos + offset;
        let Some(tag) = tag_at(raw, start) else {
            return Err(syntax("text between the parameters that is not a tag", start));
        };
        pos = tag.span.end;
        if tag.closing {
            if !is_wrapper(tag.name) {
                return Err(syntax(format!("a closing </{}> where none is open", tag.name), start));
            }
            // `</function=X>`: a name on the closing tag is a name too.
            call_name::attributes_name_this_tool(tag.attributes, tool)
                .map_err(|not| Refusal::new(RefusalCode::TextOutside, not.message(), Some(start)))?;
            call.closing = true;
            continue;
        }
        match tag.name {
            "parameter" => {
                call.parameter(start)?;
                let key = parameter_name(tag.attributes).ok_or_else(|| syntax("a parameter without a name", start))?;
                only_known_attributes(extra_attributes(tag.attributes), &key, start)?;
                let (value_span, after, closing) = element_text(raw, pos, "parameter")?;
                tag::closes_key(closing, &key, value_span.end)?;
                reads_one_way(raw, pos, &value_span)?;
                let kind = value_kind(tag.attributes);
                parameters.push(Parameter::new(key, raw, value_span, kind));
                pos = after;
            }
            "arg_key" => {
                call.parameter(start)?;
                if pending_key.is_some() {
                    return Err(syntax("two <arg_key>s before one <arg_value>", start));
                }
                let (key_span, after, closing) = element_text(raw, pos, "arg_key")?;
                let key = raw[key_span.clone()].trim();
                only_known_attributes(tag.attributes, key, start)?;
                tag::closes_key(closing, key, key_span.end)?;
                pending_key = Some((key.to_string(), start));
                pos = after;
            }
            "arg_value" => {
                let (key, _) =
                    pending_key.take().ok_or_else(|| syntax("an <arg_value> without its <arg_key>", start))?;
                call.parameter(start)?;
                only_known_attributes(tag.attributes, &key, start)?;
                let (value_span, after, closing) = element_text(raw, pos, "arg_value")?;
                tag::closes_key(closing, &key, value_span.end)?;
                reads_one_way(raw, pos, &value_span)?;
                parameters.push(Parameter::new(key, raw, value_span, ValueKind::Either));
                pos = after;
            }
            "name" => {
                // `<function><name>bash</name>`: the tool's name, not a parameter.
                call.open("name", start)?;
                let (name_span, after, _) = element_text(raw, pos, "name")?;
                names_this_call(raw[name_span].trim(), tool, start)?;
                pos = after;
            }
            name if is_wrapper(name) => {
                call.open(name, start)?;
                call_name::attributes_name_this_tool(tag.attributes, tool)
                    .map_err(|not| Refusal::new(RefusalCode::TextOutside, not.message(), Some(start)))?;
            }
            // `…</function>⏎</tool_call>⏎<|im_end|>`: a chat template's token that ends the call
            // or its turn (as after a call's JSON); anything after it is another call.
            name if call.in_parameters
                && tag.attributes == "|"
                && raw[start..].starts_with("<|")
                && call_name::is_ending_token(name) =>
            {
                call.closing = true;
            }
            name => return Err(syntax(format!("an unknown tag <{name}>"), start)),
        }
    }
    if let Some((_, at)) = pending_key {
        return Err(syntax("an <arg_key> without its <arg_value>", at));
    }
    settle_layout(raw, &mut parameters);
    Ok((!parameters.is_empty()).then_some(parameters))
}

/// The part of `raw` inside the wrappers its call may sit in: text before the first tag and
/// after the last one that the JSON rung would drop around an object too (a lead-in such as
/// `Running:`, a code fence, a closing sentence after a lead-in). Any other text stays in,
/// where it refuses as text outside the tags.
fn inside_wrappers(raw: &str, tool: Option<&str>) -> Range<usize> {
    let whole = 0..raw.len();
    let (Some(first), Some(last)) = (raw.find('<'), raw.rfind('>')) else {
        return whole;
    };
    let (before, after) = (&raw[..first], &raw[last + 1..]);
    // A colon inside the text states a value (`timeout: 5`, as the JSON rung takes it): only
    // the colon that ends a lead-in is the lead-in's.
    let states_a_value = |text: &str| text.trim().trim_end_matches(':').contains(':');
    if first > last
        || (before.trim().is_empty() && after.trim().is_empty())
        || states_a_value(before)
        || states_a_value(after)
    {
        return whole;
    }
    match wrapper::prefix(before, tool) {
        Some(opened) if wrapper::suffix(after, opened, tool) => first..last + 1,
        _ => whole,
    }
}

/// Tags that only wrap a call: the function, the invoke, the tool-call envelope.
fn is_wrapper(name: &str) -> bool {
    matches!(name, "function" | "invoke" | "tool_call" | "tool_calls" | "function_calls" | "tool_use")
}

/// Text outside the tags must be blank.
fn outside(raw: &str, span: Range<usize>) -> Result<(), Refusal> {
    match raw[span.clone()].trim().is_empty() {
        true => Ok(()),
        false => Err(syntax("text outside the parameter tags", span.start)),
    }
}

fn syntax(message: impl Into<String>, at: usize) -> Refusal {
    Refusal::new(RefusalCode::Syntax, message, Some(at))
}

/// The text of an element whose opening tag ended at `from`, up to its closing tag (with any
/// layout: see [`settle_layout`]); where the closing tag ends, and its attributes. One forward
/// scan over the `</`s; each one's tag is read up to the next `<` at most.
fn element_text<'a>(raw: &'a str, from: usize, name: &str) -> Result<(Range<usize>, usize, &'a str), Refusal> {
    for offset in memmem::find_iter(&raw.as_bytes()[from..], b"</") {
        let at = from + offset;
        match tag_at(raw, at) {
            Some(tag) if tag.closing && tag.name == name => {
                return Ok((from..at, tag.span.end, tag.attributes));
            }
            _ => {}
        }
    }
    Err(Refusal::new(RefusalCode::Truncated, format!("the input ends inside a <{name}> value"), Some(from)))
}

/// Qwen's layout puts one line break after each value's opening tag and one before its closing
/// tag; the other syntaxes put none. The call shows which it follows: where every value carries
/// the pair it is the syntax's and goes from all, and where none does there is nothing to drop.
/// Where only some do, the call follows no one layout, and a value carrying the pair reads with
/// and without it: it goes, and the value is marked (refused where it may be text; JSON ignores
/// the blanks).
fn settle_layout<'a>(raw: &'a str, parameters: &mut [Parameter<'a>]) {
    let insides: Vec<_> = parameters.iter().map(|parameter| inside_layout(raw, &parameter.value_span)).collect();
    let everywhere = insides.iter().all(Option::is_some);
    for (parameter, inside) in parameters.iter_mut().zip(insides) {
        if let Some(inside) = inside {
            parameter.value = &raw[inside.clone()];
            parameter.value_span = inside;
            parameter.layout_in_doubt = !everywhere;
        }
    }
}

/// `span` without one line break on either side, when it has one on both. One on a side alone
/// is the value's own (`<parameter name="content">…</project>⏎</parameter>`: a file's last line
/// break), and so is a lone `⏎`.
fn inside_layout(raw: &str, span: &Range<usize>) -> Option<Range<usize>> {
    let text = &raw[span.clone()];
    let lead = if text.starts_with("\r\n") { 2 } else { usize::from(text.starts_with('\n')) };
    let trail = if text.ends_with("\r\n") { 2 } else { usize::from(text.ends_with('\n')) };
    (lead > 0 && trail > 0 && lead + trail <= text.len()).then(|| span.start + lead..span.end - trail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ToolSchema;
    use serde_json::json;

    fn readings_of(text: &str, property: Value) -> Result<Vec<Value>, &'static str> {
        let schema = ToolSchema::compile(&json!({"type": "object", "properties": {"v": property}})).unwrap();
        let shapes = schema.shapes();
        values(text, ValueKind::Either, shapes.property(shapes.root(), "v"), shapes, ParseOptions::default(), None)
    }

    /// What the foreign rung makes of `raw` for a tool with these properties: the one reading, or
    /// the refusal's code.
    fn repaired(raw: &str, properties: Value, tool: Option<&str>) -> Result<Value, RefusalCode> {
        let schema = ToolSchema::compile(&json!({"type": "object", "properties": properties})).unwrap();
        let mut readings = Readings::new(Some(&schema), tool);
        offer(raw, schema.shapes(), ParseOptions::default(), tool, &mut readings).map_err(|r| r.code)?;
        readings.decide().map(|(value, _)| value).map_err(|r| r.code)
    }

    fn edit_properties() -> Value {
        json!({"file_path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"}})
    }

    #[test]
    fn edge_line_breaks_on_every_value_are_the_layout_and_go_from_all() {
        let qwen = "<function=Edit>\n<parameter=file_path>\n/a.py\n</parameter>\n<parameter=old_string>\ndef f():\n\
                    </parameter>\n<parameter=new_string>\n\n</parameter>\n</function>";
        assert_eq!(
            repaired(qwen, edit_properties(), Some("Edit")),
            Ok(json!({"file_path": "/a.py", "old_string": "def f():", "new_string": ""}))
        );
    }

    #[test]
    fn edge_line_breaks_on_no_value_are_the_values_own() {
        // A lone line break is one, not a pair; a trailing one alone is a file's last.
        let raw = "<parameter name=\"file_path\">/a.py</parameter><parameter name=\"old_string\">\n</parameter>\
                   <parameter name=\"new_string\">x\n</parameter>";
        assert_eq!(
            repaired(raw, edit_properties(), None),
            Ok(json!({"file_path": "/a.py", "old_string": "\n", "new_string": "x\n"}))
        );
    }

    #[test]
    fn edge_line_breaks_on_some_values_only_refuse_where_a_value_may_be_text() {
        for raw in [
            // Glued Claude tags beside a value with a line break at both.
            "<invoke name=\"Edit\"><parameter name=\"file_path\">/a.py</parameter><parameter name=\"old_string\">\n    \
             # TODO\n</parameter><parameter name=\"new_string\">\n</parameter></invoke>",
            // `\n` kept as the value's own, `\n\n` made empty: two layouts in one call.
            "<parameter name=\"file_path\">/a.py</parameter><parameter name=\"old_string\">\n</parameter>\
             <parameter name=\"new_string\">\n\n</parameter>",
            "<arg_key>file_path</arg_key><arg_value>/a.py</arg_value><arg_key>old_string</arg_key>\
             <arg_value>\ndef f():\n</arg_value><arg_key>new_string</arg_key><arg_value>x</arg_value>",
            "<function=Edit>\n<parameter=file_path>/a.py</parameter>\n<parameter=old_string>\na\n</parameter>\n\
             <parameter=new_string>\nb\n</parameter>\n</function>",
        ] {
            assert_eq!(repaired(raw, edit_properties(), Some("Edit")), Err(RefusalCode::Ambiguous), "{raw:?}");
        }
        // A number's blanks are JSON's to ignore: one reading either way.
        let properties = json!({"command": {"type": "string"}, "timeout": {"type": "integer"}});
        let raw = "<parameter name=\"command\">ls</parameter><parameter name=\"timeout\">\n5\n</parameter>";
        assert_eq!(repaired(raw, properties, None), Ok(json!({"command": "ls", "timeout": 5})));
    }

    fn list() -> Value {
        json!({"type": "array", "items": {"type": "string"}})
    }

    #[test]
    fn a_bare_list_opening_a_comment_at_a_words_start_refuses() {
        for text in ["src/*.rs /*generated*/", "src, tests /* dirs */", "src, tests // main dirs", "//x, y"] {
            assert!(readings_of(text, list()).is_err(), "{text:?}");
        }
        // Inside a word the markers are a glob's.
        assert_eq!(
            readings_of("src/**/*.rs, tests/**/*.rs", list()),
            Ok(vec![json!(["src/**/*.rs", "tests/**/*.rs"])])
        );
        assert_eq!(readings_of("src/*.rs", list()), Ok(vec![json!(["src/*.rs"])]));
    }

    #[test]
    fn a_word_for_no_value_where_a_list_may_stand_refuses() {
        for text in ["null", "None", "undefined", "NIL", "Null", "[null]", "src, null", "[src, None]"] {
            assert!(readings_of(text, list()).is_err(), "{text:?}");
        }
        // A word that only holds one is an item.
        assert_eq!(readings_of("nullable, src", list()), Ok(vec![json!(["nullable", "src"])]));
        // As text, `null` is the word (no list reading there).
        assert_eq!(readings_of("null", json!({"type": "string"})), Ok(vec![json!("null")]));
    }

    #[test]
    fn a_call_of_this_tool_as_a_parameters_whole_text_refuses() {
        let bash = || json!({"command": {"type": "string"}, "timeout": {"type": "integer"}});
        let call = |json: &str| format!("<parameter name=\"command\">{json}</parameter>");
        for json in [
            r#"{"name": "Bash", "arguments": {"command": "ls"}}"#,
            r#"{"name": "Bash", "input": {"command": "ls", "timeout": 5}}"#,
            r#"{"type": "function", "function": {"name": "Bash", "arguments": {"command": "ls"}}}"#,
        ] {
            assert_eq!(repaired(&call(json), bash(), Some("Bash")), Err(RefusalCode::Ambiguous), "{json}");
        }
        // A call of another tool, or JSON that is no call, is the text.
        for json in [r#"{"name": "Read", "arguments": {"command": "ls"}}"#, r#"{"name": "demo", "version": "1"}"#] {
            assert_eq!(repaired(&call(json), bash(), Some("Bash")), Ok(json!({"command": json})), "{json}");
        }
    }

    #[test]
    fn a_string_value_wholly_in_quotes_reads_with_and_without_them() {
        let string = || json!({"type": "string"});
        assert_eq!(
            readings_of("\"/tmp/a b.txt\"", string()),
            Ok(vec![json!("\"/tmp/a b.txt\""), json!("/tmp/a b.txt")])
        );
        assert_eq!(readings_of("'ls -la'", string()), Ok(vec![json!("'ls -la'"), json!("ls -la")]));
        assert_eq!(readings_of("“notes.md”", string()), Ok(vec![json!("“notes.md”"), json!("notes.md")]));
        // Quotes that open and close parts of it are the value's own.
        assert_eq!(readings_of("\"a\" and \"b\"", string()), Ok(vec![json!("\"a\" and \"b\"")]));
        assert_eq!(readings_of("plain", string()), Ok(vec![json!("plain")]));
    }

    #[test]
    fn a_string_value_wholly_in_a_code_fence_reads_with_and_without_it() {
        let string = || json!({"type": "string"});
        let fenced = "```bash\nrm -rf build\n```";
        assert_eq!(readings_of(fenced, string()), Ok(vec![json!(fenced), json!("rm -rf build")]));
        // A fence that closes and a second that opens inside: the value's own blocks, one reading.
        let two = "```\na\n```\ntext\n```\nb\n```";
        assert_eq!(readings_of(two, string()), Ok(vec![json!(two)]));
        // A fence only at one edge, or on one line, is the text's own.
        assert_eq!(readings_of("```bash\nls", string()), Ok(vec![json!("```bash\nls")]));
        assert_eq!(readings_of("```ls```", string()), Ok(vec![json!("```ls```")]));
    }

    #[test]
    fn json5_only_escapes_in_a_json_value_read_both_ways() {
        let list = || json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(readings_of("['a\\\nb']", list()), Ok(vec![json!(["ab"]), json!(["a\\\nb"])]));
        assert_eq!(readings_of("[\"a\\\r\nb\"]", list()), Ok(vec![json!(["ab"]), json!(["a\\\r\nb"])]));
        assert_eq!(readings_of("[\"it\\'s\"]", list()), Ok(vec![json!(["it's"]), json!(["it\\'s"])]));
        // In a `'` string `\'` is the quote's only spelling, and JSON escapes are JSON's: one reading.
        assert_eq!(readings_of("['it\\'s']", list()), Ok(vec![json!(["it's"])]));
        assert_eq!(readings_of("[\"a\\nb\"]", list()), Ok(vec![json!(["a\nb"])]));
    }

    #[test]
    fn a_wrapper_naming_another_tool_in_any_spelling_is_not_this_call() {
        let tags = "<parameter name=\"file_path\">a.txt</parameter>";
        for open in [
            "<invoke name=Write>",
            "<invoke NAME = \"Write\">",
            "<invoke tool=“Write”>",
            "<invoke name=\"Read\" id=\"Write\">",
            "<function Write>",
            "<function = Write>",
            "<invoke name=\"Write'>",
        ] {
            let raw = format!("{open}\n{tags}\n</invoke>");
            let refusal = parameters(&raw, Some("Read")).err();
            assert_eq!(refusal.map(|r| r.code), Some(RefusalCode::TextOutside), "{raw:?}");
        }
        let closed_for_another = format!("<function=Read>\n{tags}\n</function=Write>");
        assert!(parameters(&closed_for_another, Some("Read")).is_err());
        for open in ["<invoke name=Read>", "<invoke NAME = 'Read'>", "<function = Read>", "<invoke>"] {
            let raw = format!("{open}\n{tags}\n</invoke>");
            assert!(parameters(&raw, Some("Read")).is_ok_and(|p| p.is_some()), "{raw:?}");
        }
    }
}
