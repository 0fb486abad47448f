//! A reading of input written in one of the tool-call XML syntaxes models fall back to instead
//! of JSON: `<parameter name="K">V</parameter>`, `<parameter=K>V</parameter>` (optionally inside
//! `<function=NAME>…</function>` or `<invoke name="…">…</invoke>`), and
//! `<arg_key>K</arg_key><arg_value>V</arg_value>`. K must be a property the schema declares. V
//! is verbatim text for a string property; for other types it is read as JSON. One line break
//! right after the opening tag and one right before the closing tag belong to the syntax.

use super::edit::{Edit, EditKind};
use super::lenient::ParseOptions;
use super::outcome::{Refusal, RefusalCode};
use super::readings::{Reading, Readings};
use crate::schema::{escape_pointer, Shape, ShapeId, ShapeSet};
use serde_json::{Map, Value};
use std::ops::Range;

/// Combinations of per-parameter readings walked at most.
const MAX_COMBINATIONS: usize = 16;

/// One tag: `<name …>` or `</name>`, with the text of its attributes.
#[derive(Debug)]
struct Tag<'a> {
    span: Range<usize>,
    closing: bool,
    name: &'a str,
    attributes: &'a str,
}

/// One `K = V` the syntax wrote.
struct Parameter<'a> {
    key: String,
    value: &'a str,
    value_span: Range<usize>,
}

/// Offers the readings of `raw` as foreign syntax, if it is written in one. Returns `Err` only
/// for a refusal that holds for the whole input (a value cut before its closing tag).
pub fn offer(raw: &str, shapes: &ShapeSet, _parse: ParseOptions, readings: &mut Readings) -> Result<(), Refusal> {
    if !raw.contains("<parameter") && !raw.contains("<arg_key") && !raw.contains("parameter") {
        return Ok(());
    }
    let parameters = match parameters(raw) {
        Ok(Some(parameters)) => parameters,
        Ok(None) => return Ok(()),
        Err(refusal) if refusal.code == RefusalCode::Truncated => return Err(refusal),
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
        let values = values(parameter.value, shape, shapes);
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
    raw.contains('<') && matches!(parameters(raw), Ok(Some(_)))
}

/// How a parameter's text reads at a value of shape `id`: verbatim where a string may stand,
/// as JSON where another type may.
fn values(text: &str, id: ShapeId, shapes: &ShapeSet) -> Vec<Value> {
    let (mut string, mut other) = (false, false);
    visit(shapes, id, &mut |shape| match shape {
        Shape::String { .. } => string = true,
        Shape::Any => {
            string = true;
            other = true;
        }
        _ => other = true,
    });
    let mut values = Vec::new();
    if string {
        values.push(Value::String(text.to_string()));
    }
    if other {
        let parsed = super::lexeme::json_number(text.trim())
            .map(Value::Number)
            .or_else(|| serde_json::from_str::<Value>(text.trim()).ok())
            .or_else(|| json5::from_str::<Value>(text.trim()).ok().filter(|v| v.is_array() || v.is_object()));
        if let Some(parsed) = parsed.filter(|v| !v.is_string()) {
            values.push(parsed);
        }
    }
    values
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

/// The parameters, in order; `None` when the text holds no parameter syntax at all; `Err` when
/// the syntax is broken (text between the tags, a value never closed).
fn parameters(raw: &str) -> Result<Option<Vec<Parameter<'_>>>, Refusal> {
    let mut parameters = Vec::new();
    let mut pos = 0;
    let mut pending_key: Option<(String, usize)> = None;
    while pos < raw.len() {
        let Some(offset) = raw[pos..].find('<') else {
            outside(raw, pos..raw.len())?;
            break;
        };
        outside(raw, pos..pos + offset)?;
        let start = pos + offset;
        let Some(tag) = tag_at(raw, start) else {
            return Err(syntax("text between the parameters that is not a tag", start));
        };
        pos = tag.span.end;
        if tag.closing {
            if !is_wrapper(tag.name) {
                return Err(syntax(format!("a closing </{}> where none is open", tag.name), start));
            }
            continue;
        }
        match tag.name {
            "parameter" => {
                let key = parameter_name(tag.attributes).ok_or_else(|| syntax("a parameter without a name", start))?;
                let (value_span, after) = element_text(raw, pos, "parameter")?;
                parameters.push(Parameter { key, value: &raw[value_span.clone()], value_span });
                pos = after;
            }
            "arg_key" => {
                let (key_span, after) = element_text(raw, pos, "arg_key")?;
                pending_key = Some((raw[key_span].trim().to_string(), start));
                pos = after;
            }
            "arg_value" => {
                let (key, _) =
                    pending_key.take().ok_or_else(|| syntax("an <arg_value> without its <arg_key>", start))?;
                let (value_span, after) = element_text(raw, pos, "arg_value")?;
                parameters.push(Parameter { key, value: &raw[value_span.clone()], value_span });
                pos = after;
            }
            "name" => {
                // `<function><name>bash</name>`: the tool's name, not a parameter.
                let (_, after) = element_text(raw, pos, "name")?;
                pos = after;
            }
            name if is_wrapper(name) => {}
            name => return Err(syntax(format!("an unknown tag <{name}>"), start)),
        }
    }
    if let Some((_, at)) = pending_key {
        return Err(syntax("an <arg_key> without its <arg_value>", at));
    }
    Ok((!parameters.is_empty()).then_some(parameters))
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

/// The tag starting at `start` (a `<`), its name normalized: `/` and the `|`, `｜DSML｜` or
/// `namespace:` decorations some models add are dropped.
fn tag_at(raw: &str, start: usize) -> Option<Tag<'_>> {
    let close = raw[start..].find('>').map(|i| start + i)?;
    let inner = &raw[start + 1..close];
    if inner.contains(['<', '\n']) {
        return None;
    }
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let inner = inner.trim_start_matches(['|', '｜']);
    let inner = inner.strip_prefix("DSML").map_or(inner, |rest| rest.trim_start_matches(['|', '｜']));
    let name_end = inner.find(|c: char| c.is_whitespace() || c == '=' || c == '|').unwrap_or(inner.len());
    let name = &inner[..name_end];
    let name = name.rsplit_once(':').map_or(name, |(_, local)| local);
    Some(Tag { span: start..close + 1, closing, name, attributes: &inner[name_end..] })
}

/// `name="K"`, `name='K'` or `=K` (the `<parameter=K>` form).
fn parameter_name(attributes: &str) -> Option<String> {
    if let Some(rest) = attributes.strip_prefix('=') {
        let name = rest.split_whitespace().next()?.trim_matches(['"', '\'']);
        return (!name.is_empty()).then(|| name.to_string());
    }
    let at = attributes
        .match_indices("name=")
        .find(|(i, _)| *i == 0 || attributes.as_bytes()[i - 1].is_ascii_whitespace())?
        .0;
    let rest = &attributes[at + 5..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    Some(body[..body.find(quote)?].to_string())
}

/// The text of an element whose opening tag ended at `from`, up to its closing tag, without
/// the one line break the syntax puts on either side; and where the closing tag ends.
fn element_text(raw: &str, from: usize, name: &str) -> Result<(Range<usize>, usize), Refusal> {
    let mut search = from;
    loop {
        let Some(offset) = raw[search..].find("</") else {
            return Err(Refusal::new(
                RefusalCode::Truncated,
                format!("the input ends inside a <{name}> value"),
                Some(from),
            ));
        };
        let at = search + offset;
        match tag_at(raw, at) {
            Some(tag) if tag.closing && tag.name == name => {
                let mut start = from;
                let mut end = at;
                if raw[start..end].starts_with("\r\n") {
                    start += 2;
                } else if raw[start..end].starts_with('\n') {
                    start += 1;
                }
                if raw[start..end].ends_with("\r\n") {
                    end -= 2;
                } else if raw[start..end].ends_with('\n') {
                    end -= 1;
                }
                return Ok((start..end, tag.span.end));
            }
            _ => search = at + 2,
        }
    }
}
