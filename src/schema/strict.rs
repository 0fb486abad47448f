//! Strict tool schemas: whether a tool's `input_schema` fits the subset the Messages API can
//! compile into a grammar (`strict: true`), and the schema normalized the way Anthropic's SDKs
//! do it: `additionalProperties: false` on every object, `oneOf` as `anyOf`, and constraints the
//! grammar cannot enforce moved into the description.

use super::{escape_pointer, MAX_SCHEMA_DEPTH};
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
        if depth > MAX_SCHEMA_DEPTH {
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
            let at = format!("{pointer}/{}", escape_pointer(key));
            match key.as_str() {
                "$ref" => {
                    self.check_ref(value, &at, depth)?;
                    out.insert(key.clone(), value.clone());
                }
                "$defs" | "definitions" => {
                    out.insert(key.clone(), self.walk_named(value, &at, depth, false)?);
                }
                "properties" => {
                    out.insert(key.clone(), self.walk_named(value, &at, depth, true)?);
                }
                "items" => {
                    out.insert(key.clone(), self.walk(value, &at, depth + 1)?);
                }
                "anyOf" | "oneOf" => {
                    out.insert("anyOf".into(), self.walk_branches(value, &at, depth)?);
                }
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(incompatible(&at, "additionalProperties other than false"));
                }
                "additionalProperties" => {}
                // The API compiles `minItems` of 0 or 1 only.
                "minItems" if matches!(value.as_u64(), Some(0 | 1)) => {
                    out.insert(key.clone(), value.clone());
                }
                "minItems" => {
                    moved.insert(key.clone(), value.clone());
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if MOVED.contains(&k) => {
                    moved.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) => {}
                other => return Err(incompatible(&at, format!("unsupported keyword '{other}'"))),
            }
        }
        if object.get("type") == Some(&json!("object")) || object.contains_key("properties") {
            self.optional += optional_count(object);
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
        if !moved.is_empty() {
            move_into_description(&mut out, moved);
        }
        Ok(Value::Object(out))
    }

    /// `properties` or `$defs`: an object of named schemas; `count_unions` for properties.
    fn walk_named(&mut self, value: &Value, at: &str, depth: usize, count_unions: bool) -> Result<Value, Incompatible> {
        let Value::Object(named) = value else { return Err(incompatible(at, "expected an object")) };
        let mut walked = Map::new();
        for (name, schema) in named {
            if count_unions && is_union(schema) {
                self.unions += 1;
            }
            walked.insert(name.clone(), self.walk(schema, &format!("{at}/{}", escape_pointer(name)), depth + 1)?);
        }
        Ok(Value::Object(walked))
    }

    /// `anyOf` / `oneOf` branches, normalized as `anyOf`.
    fn walk_branches(&mut self, value: &Value, at: &str, depth: usize) -> Result<Value, Incompatible> {
        let Value::Array(branches) = value else { return Err(incompatible(at, "expected an array")) };
        let mut walked = Vec::with_capacity(branches.len());
        for (i, branch) in branches.iter().enumerate() {
            walked.push(self.walk(branch, &format!("{at}/{i}"), depth + 1)?);
        }
        Ok(Value::Array(walked))
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

/// Properties of an object schema not listed in its `required`.
fn optional_count(object: &Map<String, Value>) -> usize {
    let required: HashSet<&str> =
        object.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let properties = object.get("properties").and_then(Value::as_object);
    properties.map_or(0, |p| p.keys().filter(|k| !required.contains(k.as_str())).count())
}

/// Constraints the grammar cannot enforce, kept for the model as JSON in the description.
fn move_into_description(out: &mut Map<String, Value>, moved: Map<String, Value>) {
    let note = Value::Object(moved).to_string();
    let description = match out.get("description").and_then(Value::as_str) {
        Some(text) => format!("{text}\n\n{note}"),
        None => note,
    };
    out.insert("description".into(), Value::String(description));
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
    fn nesting_is_capped_at_the_shape_compilers_depth() {
        let nested = |levels: usize| {
            (0..levels).fold(json!({"type": "string"}), |inner, _| json!({"type": "array", "items": inner}))
        };
        assert!(normalize(&nested(MAX_SCHEMA_DEPTH)).is_ok(), "as deep as shape.rs accepts");
        assert_eq!(normalize(&nested(MAX_SCHEMA_DEPTH + 1)).unwrap_err().reason, "schema nested too deeply");
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
            (
                json!({"type": "object", "properties": {"a/b": {"properties": {"c~d": {"not": {}}}}}}),
                "/properties/a~1b/properties/c~0d/not",
                "unsupported keyword 'not'",
            ),
        ];
        for (schema, pointer, reason) in cases {
            let error = normalize(&schema).unwrap_err();
            assert_eq!((error.pointer.as_str(), error.reason.as_str()), (pointer, reason), "{schema}");
        }
    }
}
