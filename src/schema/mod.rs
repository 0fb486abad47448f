//! Tool schemas: compiled once into a [`ShapeSet`] that guides the lenient parse and the
//! alignment, plus a `jsonschema` validator that has the last word on every repair.

mod cache;
mod catalog;
mod compose;
mod cost;
pub(crate) mod member;
pub mod member_scan;
mod shape;
pub mod strict;

pub use cache::SchemaCache;
pub use catalog::{request_tools_text, tool_list, ToolCatalog};
pub(crate) use shape::{child_pointer, escape_pointer, MAX_SCHEMA_DEPTH};
pub use shape::{ObjectShape, Shape, ShapeId, ShapeSet};

use serde_json::Value;

/// A schema that cannot be used, with the JSON pointer (inside the schema) where it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unusable schema at '{pointer}': {message}")]
pub struct SchemaError {
    pub pointer: String,
    pub message: String,
}

impl SchemaError {
    pub(crate) fn at(pointer: &str, message: impl Into<String>) -> Self {
        Self { pointer: pointer.to_string(), message: message.into() }
    }
}

/// One tool's input schema, ready for repair.
pub struct ToolSchema {
    shapes: ShapeSet,
    validator: jsonschema::Validator,
    source: Value,
}

impl std::fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSchema").field("source", &self.source).finish_non_exhaustive()
    }
}

impl ToolSchema {
    /// Compiles a tool's `input_schema`. Remote `$ref`s are refused (no network access).
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let shapes = ShapeSet::compile(schema)?;
        // The `regex` engine runs in linear time; a pattern only a backtracking engine reads
        // (a back-reference, a look-around) makes the schema unusable, not each check slow
        // (attack round 24: `^(a|aa)+\1$` against 1,000 strings took 28 s).
        let validator = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(schema)
            .map_err(|e| SchemaError::at(e.schema_path().as_str(), e.to_string()))?;
        let checks = cost::checks(schema).map_err(|message| SchemaError::at("", message))?;
        if checks > cost::MAX_CHECKS {
            let message = format!(
                "one check of a value against it can visit over {} subschemas (definitions reached many ways through allOf, anyOf or $ref): too costly to check",
                cost::MAX_CHECKS
            );
            return Err(SchemaError::at("", message));
        }
        Ok(Self { shapes, validator, source: schema.clone() })
    }

    pub fn shapes(&self) -> &ShapeSet {
        &self.shapes
    }

    pub fn source(&self) -> &Value {
        &self.source
    }

    /// The first schema violation of `instance`, as (instance pointer, message).
    pub fn first_violation(&self, instance: &Value) -> Option<(String, String)> {
        if self.validator.is_valid(instance) {
            return None;
        }
        // `validate` stops at the first error; `iter_errors` would gather them all first.
        let error = self.validator.validate(instance).err()?;
        Some((error.instance_path().as_str().to_string(), error.to_string()))
    }
}
