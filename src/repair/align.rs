//! Rung 4: the lenient tree coerced to the schema. Bare words become strings, numbers or
//! literals as the schema asks; bare runs at array positions become arrays; single values at
//! array positions become one-item arrays. Unions are tried branch by branch: two branches that
//! fit with different values are two readings, and that is refused.

use super::edit::{total_cost, Edit, EditKind};
use super::lenient::{Member, Node, NodeKind};
use super::lexeme;
use super::numeral;
use super::outcome::{Refusal, RefusalCode};
use crate::schema::{child_pointer, Shape, ShapeId, ShapeSet};
use serde_json::{Map, Value};
use std::ops::Range;

/// Unions nested in unions deeper than this are not followed.
const MAX_UNION_DEPTH: usize = 32;

pub struct Aligner<'s> {
    shapes: &'s ShapeSet,
    /// Only the lossless coercions (for input that parsed as JSON): no single value wrapped
    /// into an array.
    lossless_only: bool,
}

type Aligned = Result<Value, Refusal>;

impl<'s> Aligner<'s> {
    pub fn new(shapes: &'s ShapeSet) -> Self {
        Self { shapes, lossless_only: false }
    }

    /// An aligner for input that parsed as JSON: only lossless coercions.
    pub fn lossless(shapes: &'s ShapeSet) -> Self {
        Self { shapes, lossless_only: true }
    }

    pub fn align_root(&self, node: &Node, edits: &mut Vec<Edit>) -> Aligned {
        self.align(node, self.shapes.root(), "", edits, 0)
    }

    fn align(&self, node: &Node, id: ShapeId, pointer: &str, edits: &mut Vec<Edit>, depth: usize) -> Aligned {
        if let NodeKind::Bare(text) = &node.kind {
            if numeral::other_number_spelling(text) && self.allows_number(id, depth) {
                // Before the union's branches: the text branch would take it alone.
                return Err(Refusal::new(
                    RefusalCode::Ambiguous,
                    format!("'{text}' at '{pointer}' spells a number as JSON does not: the number, or the text?"),
                    Some(node.span.start),
                ));
            }
        }
        match self.shapes.get(id) {
            // A `$ref` compiles to a one-branch union: nothing to choose between.
            Shape::Union(branches) if branches.len() == 1 && depth < MAX_UNION_DEPTH => {
                self.align(node, branches[0], pointer, edits, depth + 1)
            }
            Shape::Union(branches) if depth < MAX_UNION_DEPTH => {
                self.align_union(node, branches, pointer, edits, depth + 1)
            }
            Shape::Union(_) => {
                Err(Refusal::new(RefusalCode::UnusableSchema, "schema unions nest too deeply", Some(node.span.start)))
            }
            _ => self.align_one(node, id, pointer, edits, depth),
        }
    }

    /// Whether a number may stand at `id` (a union's branch, or nothing said).
    fn allows_number(&self, id: ShapeId, depth: usize) -> bool {
        match self.shapes.get(id) {
            Shape::Integer | Shape::Number | Shape::Any => true,
            Shape::Union(branches) => {
                depth < MAX_UNION_DEPTH && branches.iter().any(|b| self.allows_number(*b, depth + 1))
            }
            _ => false,
        }
    }

    fn align_union(
        &self,
        node: &Node,
        branches: &[ShapeId],
        pointer: &str,
        edits: &mut Vec<Edit>,
        depth: usize,
    ) -> Aligned {
        let mut fitting: Vec<(Value, Vec<Edit>)> = Vec::new();
        // The first branch's reading, kept for the validator to explain when nothing fits.
        let mut fallback: Option<(Aligned, Vec<Edit>)> = None;
        for &branch in branches {
            let mut branch_edits = Vec::new();
            match self.align(node, branch, pointer, &mut branch_edits, depth) {
                Ok(value) if self.fits(&value, branch, 0) => fitting.push((value, branch_edits)),
                other if fallback.is_none() => fallback = Some((other, branch_edits)),
                _ => {}
            }
        }
        let Some(best) = fitting.iter().min_by_key(|(_, e)| total_cost(e)) else {
            let (reading, reading_edits) = fallback.unwrap_or((Ok(Value::Null), Vec::new()));
            edits.extend(reading_edits);
            return reading;
        };
        // A branch the value fits as written wins; otherwise every coercion must agree.
        if !best.1.is_empty() && fitting.iter().any(|(value, _)| value != &best.0) {
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                format!("the value at '{pointer}' reads differently under two of the schema's alternatives"),
                Some(node.span.start),
            ));
        }
        edits.extend(best.1.iter().cloned());
        Ok(best.0.clone())
    }

    fn align_one(&self, node: &Node, id: ShapeId, pointer: &str, edits: &mut Vec<Edit>, depth: usize) -> Aligned {
        let shape = self.shapes.get(id);
        match &node.kind {
            NodeKind::Object(members) => {
                let mut map = Map::new();
                for member in members {
                    let child = self.shapes.property(id, &member.key);
                    let at = child_pointer(pointer, &member.key);
                    if matches!(&member.value.kind, NodeKind::Bare(text) if text == "undefined") {
                        self.undefined_member(member, child, &at, edits)?;
                        continue;
                    }
                    let value = self.align(&member.value, child, &at, edits, depth)?;
                    match map.get(&member.key) {
                        Some(previous) if previous != &value => {
                            return Err(Refusal::new(
                                RefusalCode::Ambiguous,
                                format!("key '{}' is given twice with different values", member.key),
                                Some(member.key_span.start),
                            ))
                        }
                        Some(_) => edits.push(Edit::new(
                            EditKind::DropDuplicate,
                            member.key_span.start..member.value.span.end,
                            at,
                        )),
                        None => {
                            map.insert(member.key.clone(), value);
                        }
                    }
                }
                Ok(Value::Object(map))
            }
            NodeKind::Array(items) | NodeKind::List(items) => {
                if let Some(at) = commas_inside_items(items) {
                    return Err(Refusal::new(
                        RefusalCode::Ambiguous,
                        format!("a quoted item at '{pointer}' holds a comma, so the comma between unquoted items may be text too"),
                        Some(at),
                    ));
                }
                let item_shape = self.shapes.items(id);
                let mut values = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    values.push(self.align(
                        item,
                        item_shape,
                        &child_pointer(pointer, &index.to_string()),
                        edits,
                        depth,
                    )?);
                }
                Ok(Value::Array(values))
            }
            NodeKind::Bare(text) => self.bare(text, node.span.clone(), id, pointer, edits, depth),
            NodeKind::Str(text) => {
                if matches!(shape, Shape::Array { .. } | Shape::Object(_)) {
                    if let Some(parsed) = self.stringified(text, id) {
                        numeral::decoded_exactly(
                            &parsed,
                            &format!("the string at '{pointer}'"),
                            Some(node.span.start),
                        )?;
                        edits.push(Edit::new(EditKind::ParseStringified, node.span.clone(), pointer));
                        return Ok(parsed);
                    }
                }
                if let Some((value, kind)) = scalar_in_string(text, shape) {
                    edits.push(Edit::new(kind, node.span.clone(), pointer));
                    return Ok(value);
                }
                Ok(self.wrap_if_listed(Value::String(text.clone()), node, id, pointer, edits))
            }
            NodeKind::Number(number) => {
                Ok(self.wrap_if_listed(Value::Number(number.clone()), node, id, pointer, edits))
            }
            NodeKind::Bool(flag) => Ok(self.wrap_if_listed(Value::Bool(*flag), node, id, pointer, edits)),
            NodeKind::Null => Ok(Value::Null),
        }
    }

    /// `key: undefined` is the member not sent (as JSON.stringify drops it): left out, unless
    /// null is a value the member may take, where the model may have meant null (`estimate:
    /// null` clears an estimate, no member leaves it). A required member left out fails later.
    fn undefined_member(
        &self,
        member: &Member,
        id: ShapeId,
        pointer: &str,
        edits: &mut Vec<Edit>,
    ) -> Result<(), Refusal> {
        if self.fits(&Value::Null, id, 0) {
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                format!("JavaScript's undefined at '{pointer}': the member left out, or null?"),
                Some(member.value.span.start),
            ));
        }
        edits.push(Edit::new(EditKind::ForeignLiteral, member.key_span.start..member.value.span.end, pointer));
        Ok(())
    }

    /// A single value where the schema wants an array of such values: a one-item array.
    fn wrap_if_listed(&self, value: Value, node: &Node, id: ShapeId, pointer: &str, edits: &mut Vec<Edit>) -> Value {
        if self.lossless_only {
            return value;
        }
        if let Shape::Array { items } = self.shapes.get(id) {
            if self.fits(&value, *items, 0) {
                edits.push(Edit::new(EditKind::WrapInArray, node.span.clone(), pointer));
                return Value::Array(vec![value]);
            }
        }
        value
    }

    /// A string holding strict JSON of the shape expected here (`"[\"a\"]"` for an array).
    fn stringified(&self, text: &str, id: ShapeId) -> Option<Value> {
        let trimmed = text.trim();
        if !(trimmed.starts_with('[') || trimmed.starts_with('{')) {
            return None;
        }
        // A key given twice is two readings (serde_json would keep the last).
        if super::json5_reading::has_duplicate_keys(trimmed) {
            return None;
        }
        serde_json::from_str::<Value>(trimmed).ok().filter(|v| self.fits(v, id, 0))
    }

    /// Unquoted text, read as the schema asks.
    fn bare(
        &self,
        text: &str,
        span: Range<usize>,
        id: ShapeId,
        pointer: &str,
        edits: &mut Vec<Edit>,
        depth: usize,
    ) -> Aligned {
        let mut note = |kind| edits.push(Edit::new(kind, span.clone(), pointer));
        let value = match (self.shapes.get(id), text) {
            // Python's and JavaScript's literals mean what they say, never the word as text:
            // where the schema wants a string, the reading fails and the call is refused.
            (_, "undefined") => {
                // In an array JSON.stringify writes null, but the model wrote no JSON: null, or
                // the item left out?
                return Err(Refusal::new(
                    RefusalCode::Ambiguous,
                    format!("JavaScript's undefined at '{pointer}' has no JSON value"),
                    Some(span.start),
                ));
            }
            (_, "True" | "False" | "None") => {
                note(EditKind::ForeignLiteral);
                let literal = match text {
                    "True" => Value::Bool(true),
                    "False" => Value::Bool(false),
                    _ => Value::Null,
                };
                let node = Node { span: span.clone(), kind: NodeKind::Null };
                return Ok(self.wrap_if_listed(literal, &node, id, pointer, edits));
            }
            (Shape::Any | Shape::Integer | Shape::Number, _)
                if !numeral::holds_in_a_double(text) && lexeme::json_number(text).is_some() =>
            {
                return Err(Refusal::new(
                    RefusalCode::Ambiguous,
                    format!(
                        "'{text}' at '{pointer}' is a number the CLI's doubles cannot hold: the number, or the text?"
                    ),
                    Some(span.start),
                ));
            }
            (Shape::Any, _) if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                let Some(number) = lexeme::json_number(text) else {
                    return Err(Refusal::new(
                        RefusalCode::Syntax,
                        format!("malformed number '{text}'"),
                        Some(span.start),
                    ));
                };
                note(EditKind::BareNumber);
                Value::Number(number)
            }
            (Shape::Integer | Shape::Number, _) => match lexeme::json_number(text) {
                Some(number) => {
                    note(EditKind::BareNumber);
                    Value::Number(number)
                }
                None => {
                    note(EditKind::BareString);
                    Value::String(text.to_string())
                }
            },
            (Shape::Literal(allowed), _) => {
                note(EditKind::BareString);
                allowed
                    .iter()
                    .find(|v| {
                        v.as_str() == Some(text)
                            || (!v.is_string() && serde_json::from_str::<Value>(text).ok().as_ref() == Some(*v))
                    })
                    .cloned()
                    .unwrap_or_else(|| Value::String(text.to_string()))
            }
            (Shape::Array { items }, _) => {
                note(EditKind::BareList);
                return self.bare_list(text, span.start, *items, pointer, depth);
            }
            _ => {
                note(EditKind::BareString);
                Value::String(text.to_string())
            }
        };
        Ok(value)
    }

    /// A bare run at an array position: items split on top-level commas (never on spaces).
    fn bare_list(&self, text: &str, offset: usize, items: ShapeId, pointer: &str, depth: usize) -> Aligned {
        let mut values = Vec::new();
        for (index, (start, piece)) in split_top_level(text).into_iter().enumerate() {
            let span = offset + start..offset + start + piece.len();
            let kind = match quoted_content(piece) {
                Some(content) => NodeKind::Str(content),
                None => NodeKind::Bare(piece.to_string()),
            };
            let node = Node { span, kind };
            // The list's one edit covers its items.
            let mut item_edits = Vec::new();
            values.push(self.align(
                &node,
                items,
                &child_pointer(pointer, &index.to_string()),
                &mut item_edits,
                depth,
            )?);
        }
        Ok(Value::Array(values))
    }

    /// Whether `value` has the shape `id` describes, as far as guiding a choice needs; the
    /// validator still has the last word.
    pub fn fits(&self, value: &Value, id: ShapeId, depth: usize) -> bool {
        if depth > MAX_UNION_DEPTH * 4 {
            return true;
        }
        match (self.shapes.get(id), value) {
            (Shape::Any | Shape::Pending, _) => true,
            (Shape::Union(branches), _) => branches.iter().any(|b| self.fits(value, *b, depth + 1)),
            (Shape::Object(object), Value::Object(map)) => {
                object.required.iter().all(|key| map.contains_key(key))
                    && map.iter().all(|(key, v)| match object.property(key).or(object.additional) {
                        Some(child) => self.fits(v, child, depth + 1),
                        None => false,
                    })
            }
            (Shape::Array { items }, Value::Array(list)) => list.iter().all(|v| self.fits(v, *items, depth + 1)),
            (Shape::String { allowed }, Value::String(s)) => allowed.as_ref().is_none_or(|a| a.contains(s)),
            (Shape::Integer, Value::Number(n)) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            (Shape::Number, Value::Number(_)) | (Shape::Boolean, Value::Bool(_)) | (Shape::Null, Value::Null) => true,
            (Shape::Literal(allowed), v) => allowed.contains(v),
            _ => false,
        }
    }
}

/// Where two unquoted items stand side by side (split on the comma between them) in a list
/// whose quoted item holds a comma (`"Smith, John", Doe, Jane`): that item says commas live
/// inside items here, so `Doe, Jane` may be one.
fn commas_inside_items(items: &[Node]) -> Option<usize> {
    let quoted_comma = items.iter().any(|item| matches!(&item.kind, NodeKind::Str(text) if text.contains(',')));
    let bare = |item: &Node| matches!(item.kind, NodeKind::Bare(_));
    items
        .windows(2)
        .find(|pair| bare(&pair[0]) && bare(&pair[1]))
        .filter(|_| quoted_comma)
        .map(|pair| pair[0].span.start)
}

/// A string that is exactly the number or boolean the schema wants here (`"120"`, `"true"`):
/// the value it spells, nothing added or lost.
fn scalar_in_string(text: &str, shape: &Shape) -> Option<(Value, EditKind)> {
    match shape {
        // `"600.000"`: six hundred, or six hundred thousand? `"1184457398123945991"`: the string
        // is the only exact form of the id the CLI's doubles would round.
        Shape::Integer | Shape::Number if !numeral::coercible(text) => None,
        Shape::Integer | Shape::Number => {
            lexeme::json_number(text).map(|n| (Value::Number(n), EditKind::NumericString))
        }
        Shape::Boolean => match text {
            "true" => Some((Value::Bool(true), EditKind::BooleanString)),
            "false" => Some((Value::Bool(false), EditKind::BooleanString)),
            _ => None,
        },
        _ => None,
    }
}

/// Splits on commas outside quotes and brackets; pieces trimmed, empty pieces dropped.
fn split_top_level(text: &str) -> Vec<(usize, &str)> {
    let mut pieces = Vec::new();
    let (mut depth, mut quote, mut escaped, mut start) = (0usize, None, false, 0);
    let mut push = |from: usize, to: usize| {
        let raw = &text[from..to];
        let lead = raw.len() - raw.trim_start().len();
        let piece = raw.trim();
        if !piece.is_empty() {
            pieces.push((from + lead, piece));
        }
    };
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            // A double quote opens a quoted stretch anywhere (`title "Smith, John" 2020`); a
            // single one only where a word starts (not `it's`).
            (None, '"') => quote = Some(c),
            (None, '\'')
                if text[..i].ends_with(|p: char| p.is_whitespace() || p == ',') || text[start..i].trim().is_empty() =>
            {
                quote = Some(c)
            }
            (None, '[' | '{' | '(') => depth += 1,
            (None, ']' | '}' | ')') => depth = depth.saturating_sub(1),
            (None, ',') if depth == 0 => {
                push(start, i);
                start = i + 1;
            }
            _ => {}
        }
        escaped = false;
    }
    push(start, text.len());
    pieces
}

/// The content of a piece that is exactly one quoted string.
fn quoted_content(piece: &str) -> Option<String> {
    if piece.len() >= 2 && piece.starts_with('"') && piece.ends_with('"') {
        return serde_json::from_str(piece).ok();
    }
    if piece.len() >= 2 && piece.starts_with('\'') && piece.ends_with('\'') && !piece[1..piece.len() - 1].contains('\'')
    {
        return Some(piece[1..piece.len() - 1].to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separator_ambiguous_strings_stay_strings() {
        assert_eq!(scalar_in_string("600.000", &Shape::Integer), None);
        assert_eq!(scalar_in_string("1.000", &Shape::Number), None);
        assert!(scalar_in_string("600", &Shape::Integer).is_some());
        assert!(scalar_in_string("0.500", &Shape::Number).is_some());
    }

    #[test]
    fn unquoted_items_beside_a_quoted_comma_are_in_doubt() {
        let node = |kind: NodeKind| Node { span: 0..1, kind };
        let bare = |t: &str| node(NodeKind::Bare(t.to_string()));
        let quoted = |t: &str| node(NodeKind::Str(t.to_string()));
        assert!(commas_inside_items(&[quoted("Smith, John"), bare("Doe"), bare("Jane")]).is_some());
        assert!(commas_inside_items(&[quoted("Smith"), bare("Doe"), bare("Jane")]).is_none());
        assert!(commas_inside_items(&[quoted("Smith, John"), bare("Doe")]).is_none());
    }

    #[test]
    fn splits_on_top_level_commas_only() {
        let table: &[(&str, &[&str])] = &[
            ("wireless earbuds, noise cancelling", &["wireless earbuds", "noise cancelling"]),
            ("token machine payout percentage", &["token machine payout percentage"]),
            ("a, \"b, c\", d,", &["a", "\"b, c\"", "d"]),
            ("f(a, b), c", &["f(a, b)", "c"]),
            ("it's, x", &["it's", "x"]),
            ("title \"Smith, John\" 2020, y", &["title \"Smith, John\" 2020", "y"]),
        ];
        for (text, expected) in table {
            let pieces: Vec<&str> = split_top_level(text).into_iter().map(|(_, p)| p).collect();
            assert_eq!(&pieces, expected, "{text:?}");
        }
    }
}
