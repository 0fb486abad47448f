//! The engine's one rule: readings, not a first match. Every way the ladder can read the raw
//! text is offered here; a reading that validates against the schema is kept, equal ones count
//! once, and if two different readings validate the call is refused as ambiguous.

use super::edit::{Edit, EditKind};
use super::envelope::envelope;
use super::lenient::Node;
use super::outcome::{Refusal, RefusalCode};
use crate::schema::ToolSchema;
use serde_json::Value;

/// One complete reading of the raw input.
pub struct Reading {
    pub value: Value,
    pub edits: Vec<Edit>,
    /// The lenient tree it came from, to point a refusal at the right byte.
    pub tree: Option<Node>,
}

pub struct Readings<'a> {
    schema: Option<&'a ToolSchema>,
    /// The tool's name, for call envelopes.
    tool: Option<&'a str>,
    fitting: Vec<Reading>,
    /// Why the first reading that did not fit failed: the refusal when none fits.
    first_failure: Option<Refusal>,
    /// A reading that took key-shaped text as a member, and broke the schema with it.
    doubt: Option<String>,
}

impl<'a> Readings<'a> {
    pub fn new(schema: Option<&'a ToolSchema>, tool: Option<&'a str>) -> Self {
        Self { schema, tool, fitting: Vec::new(), first_failure: None, doubt: None }
    }

    /// Offers a reading. `Err` as soon as two different readings validate.
    pub fn offer(&mut self, reading: Reading) -> Result<(), Refusal> {
        if let Some(call) = envelope(&reading.value) {
            // `{"name": "tool", "parameters": {…}}`: the call's envelope around its input, and
            // where the schema lets the two keys through, its input as written too: two
            // readings. Only where the schema declares both keys are they its own members.
            let direct_fits = violation(&reading.value, self.schema).is_none();
            let members = self.declares(&call.carriers);
            // One of its keys declared (`name`, `input` or `id` as a parameter): the object's
            // keys may be the tool's own, so its inside is not taken for the input (attack
            // round 13: `{"name": "start", "arguments": {"name": "nightly-purge"}}`).
            let either = call.keys.iter().any(|key| self.mentions(key));
            let this_tool = self.tool.is_some_and(|tool| names_this_tool(call.name, tool));
            if this_tool && !either {
                if call.decoded {
                    super::numeral::decoded_exactly(&call.input, "the envelope's arguments string", None)?;
                }
                let mut edits = reading.edits.clone();
                edits.push(Edit::new(EditKind::UnwrapEnvelope, 0..0, ""));
                self.offer(Reading { value: call.input, edits, tree: None })?;
            } else if direct_fits && !members && self.tool.is_some() && !this_tool {
                // A call to another tool, which this tool would take as data.
                return Err(Refusal::new(
                    RefusalCode::TextOutside,
                    format!("the input is a call envelope for tool '{}'", call.name),
                    None,
                ));
            }
        }
        if let Some(carriers) = super::envelope::call_beside_keys(&reading.value) {
            if !carriers.iter().any(|key| self.mentions(key)) {
                return Err(Refusal::new(
                    RefusalCode::Ambiguous,
                    format!(
                        "the input holds a call ('{}', '{}') beside other keys: the call's input, or the object as written",
                        carriers[0], carriers[1]
                    ),
                    None,
                ));
            }
        }
        if let Some((pointer, message)) = violation(&reading.value, self.schema) {
            let position = reading.tree.as_ref().map(|t| t.at_pointer(&pointer).span.start);
            let at = if pointer.is_empty() { "the input".to_string() } else { format!("'{pointer}'") };
            self.fail(Refusal::new(RefusalCode::SchemaMismatch, format!("{at}: {message}"), position));
            return Ok(());
        }
        if let Some(key) = self.leaked_tags(&reading) {
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                format!("a repaired string holds the call syntax's tags for '{key}': they may be the call's"),
                None,
            ));
        }
        if let Some(other) = self.fitting.iter().find(|r| !same_value(&r.value, &reading.value)) {
            let at = first_difference(&other.value, &reading.value);
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                format!("two readings of the input fit the schema; they differ at '{at}'"),
                None,
            ));
        }
        if self.fitting.is_empty() {
            self.fitting.push(reading);
        }
        Ok(())
    }

    /// A declared key that a string of the reading names in a foreign call's opening tag
    /// (`"npm test</parameter>⏎<parameter name="description">Run"`, `"npm test\n<parameter
    /// name=\"timeout\">600000</parameter>"`): the model may have switched to the tags for the
    /// next parameter, and the tags' reading of it is a second one — whether or not the string
    /// needed an edit, and even where the text closes the tag itself (a reading that had to be
    /// repaired is no place to tell an XML file's tags from a leaked call: attack round 25).
    fn leaked_tags(&self, reading: &Reading) -> Option<String> {
        let schema = self.schema?;
        let declared = schema.shapes().known_keys(schema.shapes().root());
        let declared = declared.as_deref();
        // A reading the lenient grammar gave, an envelope's input taken off whole, or JSON read
        // again from a string (a double-encoded input: attack round 26); the others decoded JSON
        // as it was written.
        let decoded_again = |e: &Edit| {
            matches!(e.kind, EditKind::UnwrapEnvelope | EditKind::DoubleEncoded | EditKind::ParseStringified)
        };
        let read_loosely = reading.tree.is_some() || reading.edits.iter().any(decoded_again);
        read_loosely.then(|| leaked_in_value(&reading.value, declared, None)).flatten()
    }

    /// A reading that did not get as far as a fitting value. The refusal kept is the one that
    /// says most: a reading that got to a value beats one that hit bad syntax, which beats one
    /// that found no object at all; among equals, the first.
    pub fn fail(&mut self, refusal: Refusal) {
        let rank = |r: &Refusal| match r.code {
            RefusalCode::NoObject => 0,
            RefusalCode::Syntax => 1,
            _ => 2,
        };
        if self.first_failure.as_ref().is_none_or(|kept| rank(&refusal) > rank(kept)) {
            self.first_failure = Some(refusal);
        }
    }

    /// A reading that took key-shaped text inside a value as a member and then broke the
    /// schema (`rm -rf dist⏎dry_run: true`, `replace_all: yes`): the model may have meant that
    /// member, so the reading that keeps it as text is not the only one.
    pub fn doubt(&mut self, why: String) {
        self.doubt.get_or_insert(why);
    }

    /// Whether the schema declares all of `keys` at the top.
    fn declares(&self, keys: &[&str]) -> bool {
        self.schema
            .and_then(|schema| schema.shapes().known_keys(schema.shapes().root()))
            .is_some_and(|declared| keys.iter().all(|key| declared.contains(key)))
    }

    /// Whether any branch of the schema declares `key` at the top.
    fn mentions(&self, key: &str) -> bool {
        self.schema.is_some_and(|schema| schema.shapes().mentioned_keys(schema.shapes().root()).contains(&key))
    }

    /// The schema's first violation by `value`, if any.
    pub fn violation(&self, value: &Value) -> Option<(String, String)> {
        violation(value, self.schema)
    }

    /// The one reading that fits, or why there is none.
    pub fn decide(mut self) -> Result<(Value, Vec<Edit>), Refusal> {
        if let (Some(why), false) = (&self.doubt, self.fitting.is_empty()) {
            return Err(Refusal::new(
                RefusalCode::Ambiguous,
                format!("key-shaped text inside a value may be a member ({why})"),
                None,
            ));
        }
        match self.fitting.pop() {
            Some(reading) => Ok((reading.value, reading.edits)),
            None => Err(self.first_failure.unwrap_or_else(|| {
                Refusal::new(RefusalCode::NoObject, "no reading of the input gives an object", None)
            })),
        }
    }
}

/// A declared key that a string anywhere in `value` names in a foreign call's opening tag, other
/// than the key the string is the value of (`own`).
fn leaked_in_value(value: &Value, declared: Option<&[&str]>, own: Option<&str>) -> Option<String> {
    match value {
        Value::String(text) => super::foreign::names_declared_key(text, declared, own),
        Value::Array(items) => items.iter().find_map(|item| leaked_in_value(item, declared, own)),
        Value::Object(map) => map.iter().find_map(|(key, item)| leaked_in_value(item, declared, Some(key))),
        _ => None,
    }
}

/// Whether `name` in an envelope is this tool's: its own name, or an MCP tool's short name
/// (`search` for `mcp__github__search`), as wrapper tags take it.
fn names_this_tool(name: &str, tool: &str) -> bool {
    name == tool || super::lenient::mcp_short_name(tool) == Some(name)
}

/// The first schema violation, or `None`; without a schema any object is acceptable.
pub fn violation(value: &Value, schema: Option<&ToolSchema>) -> Option<(String, String)> {
    match schema {
        Some(schema) => schema.first_violation(value),
        None => (!value.is_object()).then(|| (String::new(), "tool input must be an object".to_string())),
    }
}

/// Equal values, numbers compared by what they denote: JSON5's `0.10` is the lenient `0.10`
/// even where one kept the text and the other went through a float.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64()),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(l, r)| same_value(l, r)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, l)| y.get(k).is_some_and(|r| same_value(l, r)))
        }
        _ => a == b,
    }
}

/// The JSON pointer of the first place two values differ.
fn first_difference(a: &Value, b: &Value) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, left) in x {
                match y.get(key) {
                    Some(right) if right == left => continue,
                    Some(right) => {
                        return format!("/{}{}", crate::schema::escape_pointer(key), first_difference(left, right))
                    }
                    None => return format!("/{}", crate::schema::escape_pointer(key)),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("/{}", crate::schema::escape_pointer(k)))
                .unwrap_or_default()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find(|(_, (l, r))| l != r)
            .map(|(i, (l, r))| format!("/{i}{}", first_difference(l, r)))
            .unwrap_or_default(),
        _ => String::new(),
    }
}
