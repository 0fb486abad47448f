//! Strict tool schemas: whether a tool's `input_schema` fits the subset the Messages API can
//! compile into a grammar (`strict: true`), and the schema normalized the way Anthropic's SDKs
//! do it: `additionalProperties: false` on every object, `oneOf` as `anyOf`, and constraints the
//! grammar cannot enforce moved into the description.

use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// Keywords kept as they are.
const KEPT: &[&str] = &["type", "description", "title", "properties", "required", "items", "enum", "const", "default"];
/// Constraints the grammar cannot enforce: moved into the description.
const MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "examples",
];
/// Metadata dropped without a trace.
const DROPPED: &[&str] = &["$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly"];

#[derive(Debug, Clone, PartialEq)]
pub struct StrictSchema {
    pub schema: Value,
    /// Properties not listed in `required`, across every object.
    pub optional_params: usize,
    /// Properties whose value is a union (`anyOf` or a list of types).
    pub union_params: usize,
}

/// Why a schema cannot be made strict, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason} at '{pointer}'")]
pub struct Incompatible {
    pub pointer: String,
    pub reason: String,
}

pub fn normalize(schema: &Value) -> Result<StrictSchema, Incompatible> {
    let mut walker = Walker { root: schema, optional: 0, unions: 0, resolving: HashSet::new() };
    let schema = walker.walk(schema, "", 0)?;
    Ok(StrictSchema { schema, optional_params: walker.optional, union_params: walker.unions })
}

struct Walker<'a> {
    root: &'a Value,
    optional: usize,
    unions: usize,
    /// `$ref` targets on the current path: seeing one again means recursion.
    resolving: HashSet<String>,
}

fn incompatible(pointer: &str, reason: impl Into<String>) -> Incompatible {
    Incompatible { pointer: pointer.to_string(), reason: reason.into() }
}

impl Walker<'_> {
    fn walk(&mut self, schema: &Value, pointer: &str, depth: usize) -> Result<Value, Incompatible> {
        if depth > 32 {
            return Err(incompatible(pointer, "schema nested too deeply"));
        }
        let Value::Object(object) = schema else {
            return match schema {
                Value::Bool(true) => Err(incompatible(pointer, "an unconstrained schema (true)")),
                _ => Err(incompatible(pointer, "expected a schema object")),
            };
        };
        let mut out = Map::new();
        let mut moved = Map::new();
        for (key, value) in object {
            let at = format!("{pointer}/{key}");
            match key.as_str() {
                "$ref" => self.check_ref(value, &at, depth)?,
                "$defs" | "definitions" => {
                    let Value::Object(defs) = value else { return Err(incompatible(&at, "expected an object")) };
                    let mut walked = Map::new();
                    for (name, def) in defs {
                        walked.insert(name.clone(), self.walk(def, &format!("{at}/{name}"), depth + 1)?);
                    }
                    out.insert(key.clone(), Value::Object(walked));
                    continue;
                }
                "properties" => {
                    let Value::Object(properties) = value else { return Err(incompatible(&at, "expected an object")) };
                    let mut walked = Map::new();
                    for (name, property) in properties {
                        if is_union(property) {
                            self.unions += 1;
                        }
                        walked.insert(name.clone(), self.walk(property, &format!("{at}/{name}"), depth + 1)?);
                    }
                    out.insert(key.clone(), Value::Object(walked));
                    continue;
                }
                "items" => {
                    out.insert(key.clone(), self.walk(value, &at, depth + 1)?);
                    continue;
                }
                "anyOf" | "oneOf" => {
                    let Value::Array(branches) = value else { return Err(incompatible(&at, "expected an array")) };
                    let mut walked = Vec::with_capacity(branches.len());
                    for (i, branch) in branches.iter().enumerate() {
                        walked.push(self.walk(branch, &format!("{at}/{i}"), depth + 1)?);
                    }
                    out.insert("anyOf".into(), Value::Array(walked));
                    continue;
                }
                "additionalProperties" => match value {
                    Value::Bool(false) => {}
                    _ => return Err(incompatible(&at, "additionalProperties other than false")),
                },
                "minItems" => match value.as_u64() {
                    Some(0 | 1) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => {
                        moved.insert(key.clone(), value.clone());
                    }
                },
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if MOVED.contains(&k) => {
                    moved.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) => {}
                other => return Err(incompatible(&at, format!("unsupported keyword '{other}'"))),
            }
            if key == "$ref" {
                out.insert(key.clone(), value.clone());
            }
        }
        let is_object = object.get("type") == Some(&json!("object")) || object.contains_key("properties");
        if is_object {
            let required: HashSet<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let properties = object.get("properties").and_then(Value::as_object);
            self.optional += properties.map_or(0, |p| p.keys().filter(|k| !required.contains(k.as_str())).count());
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
        if !moved.is_empty() {
            let note = Value::Object(moved).to_string();
            let description = match out.get("description").and_then(Value::as_str) {
                Some(text) => format!("{text}\n\n{note}"),
                None => note,
            };
            out.insert("description".into(), Value::String(description));
        }
        Ok(Value::Object(out))
    }

    fn check_ref(&mut self, reference: &Value, at: &str, depth: usize) -> Result<(), Incompatible> {
        let Some(target) = reference.as_str().and_then(|r| r.strip_prefix('#')) else {
            return Err(incompatible(at, "external $ref"));
        };
        let Some(resolved) = self.root.pointer(target) else {
            return Err(incompatible(at, format!("$ref '#{target}' points at nothing")));
        };
        if !self.resolving.insert(target.to_string()) {
            return Err(incompatible(at, "recursive schema"));
        }
        // Walked for its checks only; the definition itself is normalized under $defs.
        let result = self.walk(resolved, target, depth + 1).map(|_| ());
        self.resolving.remove(target);
        result
    }
}

fn is_union(schema: &Value) -> bool {
    schema.get("anyOf").is_some() || schema.get("oneOf").is_some() || schema.get("type").is_some_and(Value::is_array)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_get_additional_properties_false_and_constraints_move_to_descriptions() {
        let normalized = normalize(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "maximum": 50, "description": "How many"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "mode": {"oneOf": [{"const": "a"}, {"const": "b"}]}
            },
            "required": ["limit"]
        }))
        .unwrap();
        assert_eq!(
            normalized.schema,
            json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "description": "How many\n\n{\"maximum\":50}"},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "{\"minItems\":2}"},
                    "mode": {"anyOf": [{"const": "a"}, {"const": "b"}]}
                },
                "required": ["limit"],
                "additionalProperties": false
            })
        );
        assert_eq!((normalized.optional_params, normalized.union_params), (2, 1));
    }

    #[test]
    fn what_cannot_be_normalized_says_why_and_where() {
        let cases = [
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                "/additionalProperties",
                "additionalProperties other than false",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "https://x/y"}}}),
                "/properties/a/$ref",
                "external $ref",
            ),
            (
                json!({"type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}}),
                "/$defs/n/properties/next/$ref",
                "recursive schema",
            ),
            (
                json!({"type": "object", "properties": {"a": {"not": {"type": "string"}}}}),
                "/properties/a/not",
                "unsupported keyword 'not'",
            ),
        ];
        for (schema, pointer, reason) in cases {
            let error = normalize(&schema).unwrap_err();
            assert_eq!((error.pointer.as_str(), error.reason.as_str()), (pointer, reason), "{schema}");
        }
    }
}
