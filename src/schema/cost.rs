//! The most subschema checks one validation of a value's node can make: `allOf`, `anyOf` and
//! `$ref` that reach one definition many ways (a chain of "diamonds") make it grow as 2^depth
//! in a schema of a few KB, and the validator walks every way on every call (attack round 23:
//! 7 s per call, and the errors of a failing check filled memory until the process died).
//! A schema past [`MAX_CHECKS`] is not used: its tool's input passes through unread.

use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Subschema checks one value's node may cost. Real tool schemas cost tens to a few
/// thousand; a check this size takes milliseconds.
pub(crate) const MAX_CHECKS: u64 = 100_000;

/// Keywords whose value is one subschema.
const ONE: [&str; 11] = [
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "items",
];
/// Keywords whose value is a list of subschemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAP: [&str; 4] = ["properties", "patternProperties", "dependentSchemas", "dependencies"];

/// The checks of `schema`, saturating; `Err` with the reference that cannot be followed here
/// (one into another document, or by a name no `$anchor` gives), so cannot be bounded.
pub(crate) fn checks(schema: &Value) -> Result<u64, String> {
    let (bases, anchors) = resources(schema);
    let mut counter = Counter { bases, anchors, memo: HashMap::new(), open: HashSet::new() };
    counter.cost(schema)
}

struct Counter<'a> {
    /// The document and every subschema with an `$id` (or draft 4's `id`): a `#/…` pointer
    /// is read from the resource it stands in, which is one of these. Each is tried, and the
    /// dearest target counts, so no reading of the ids can make a schema look cheaper.
    bases: Vec<&'a Value>,
    /// The nodes each `$anchor` or `$dynamicAnchor` name names, anywhere in the document.
    anchors: HashMap<&'a str, Vec<&'a Value>>,
    /// Costs by node (its address in the document).
    memo: HashMap<*const Value, u64>,
    /// Nodes being counted: a reference back to one is recursion, which the value's own
    /// depth bounds.
    open: HashSet<*const Value>,
}

impl<'a> Counter<'a> {
    fn cost(&mut self, node: &'a Value) -> Result<u64, String> {
        let Value::Object(map) = node else { return Ok(1) };
        let key = node as *const Value;
        if let Some(&done) = self.memo.get(&key) {
            return Ok(done);
        }
        if !self.open.insert(key) {
            return Ok(1);
        }
        let mut total: u64 = 1;
        let mut add = |cost: u64| total = total.saturating_add(cost);
        for name in ONE {
            if let Some(sub) = map.get(name) {
                match sub {
                    Value::Array(list) => {
                        for item in list {
                            add(self.cost(item)?);
                        }
                    }
                    _ => add(self.cost(sub)?),
                }
            }
        }
        for name in LIST {
            for sub in map.get(name).and_then(Value::as_array).into_iter().flatten() {
                add(self.cost(sub)?);
            }
        }
        for name in MAP {
            for sub in map.get(name).and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
                add(self.cost(sub)?);
            }
        }
        for name in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.get(name).and_then(Value::as_str) {
                let mut dearest = 0;
                for target in self.resolve(reference)? {
                    dearest = dearest.max(self.cost(target)?);
                }
                add(dearest);
            }
        }
        self.open.remove(&key);
        self.memo.insert(key, total);
        Ok(total)
    }

    /// Every node `reference` may name; `Err` when it names none here.
    fn resolve(&self, reference: &str) -> Result<Vec<&'a Value>, String> {
        let unfollowed = || format!("the reference '{reference}' cannot be followed to bound the schema's checks");
        let fragment = reference.strip_prefix('#').ok_or_else(unfollowed)?;
        let targets: Vec<&'a Value> = if fragment.is_empty() || fragment.starts_with('/') {
            let pointer = percent_decoded(fragment).ok_or_else(unfollowed)?;
            self.bases.iter().filter_map(|base| base.pointer(&pointer)).collect()
        } else {
            self.anchors.get(fragment).cloned().unwrap_or_default()
        };
        if targets.is_empty() {
            return Err(unfollowed());
        }
        Ok(targets)
    }
}

/// The resources of the document (itself, and every subschema with an `$id` or `id` string),
/// and the nodes each anchor name names.
fn resources(schema: &Value) -> (Vec<&Value>, HashMap<&str, Vec<&Value>>) {
    let mut bases = vec![schema];
    let mut anchors: HashMap<&str, Vec<&Value>> = HashMap::new();
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        match node {
            Value::Object(map) => {
                for name in ["$anchor", "$dynamicAnchor"] {
                    if let Some(anchor) = map.get(name).and_then(Value::as_str) {
                        anchors.entry(anchor).or_default().push(node);
                    }
                }
                let has_id = ["$id", "id"].iter().any(|name| map.get(*name).is_some_and(Value::is_string));
                if has_id && !std::ptr::eq(node, schema) {
                    bases.push(node);
                }
                pending.extend(map.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    (bases, anchors)
}

/// A URI fragment's `%XX` escapes decoded (`#/$defs/a%20b`); `None` if one is malformed.
fn percent_decoded(fragment: &str) -> Option<String> {
    if !fragment.contains('%') {
        return Some(fragment.to_string());
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `d0` → `d1`/`e1` → … → `d{depth}`: every level doubles the ways down.
    fn diamonds(depth: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..depth {
            let parts =
                json!({"allOf": [{"$ref": format!("#/$defs/d{}", i + 1)}, {"$ref": format!("#/$defs/e{}", i + 1)}]});
            defs.insert(format!("d{i}"), parts.clone());
            defs.insert(format!("e{i}"), parts);
        }
        let leaf = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        defs.insert(format!("d{depth}"), leaf.clone());
        defs.insert(format!("e{depth}"), leaf);
        json!({"$ref": "#/$defs/d0", "$defs": defs})
    }

    #[test]
    fn ways_through_shared_definitions_are_counted_each() {
        assert_eq!(checks(&json!({"type": "string"})), Ok(1));
        let flat = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"items": {}}}});
        assert_eq!(checks(&flat), Ok(4));
        let small = checks(&diamonds(4)).unwrap();
        let big = checks(&diamonds(30)).unwrap();
        assert!(small < 200, "{small}");
        assert!(big > MAX_CHECKS, "{big}");
        assert_eq!(checks(&diamonds(70)), Ok(u64::MAX), "saturates");
    }

    #[test]
    fn recursion_anchors_and_escaped_pointers_are_followed() {
        let tree = json!({"$defs": {"node": {"properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}},
                          "$ref": "#/$defs/node"});
        assert!(checks(&tree).unwrap() < 10);
        let anchored = json!({"$defs": {"x": {"$anchor": "x", "type": "string"}}, "$ref": "#x"});
        assert_eq!(checks(&anchored), Ok(2));
        let escaped = json!({"$defs": {"a b": {"type": "string"}}, "$ref": "#/$defs/a%20b"});
        assert_eq!(checks(&escaped), Ok(2));
        assert!(checks(&json!({"$ref": "other.json#/a"})).is_err());
        // Inside a resource with its own id, `#/…` may be read from it or from the document:
        // the dearer target counts.
        let mut big = diamonds(30);
        big["$id"] = json!("urn:big");
        let scoped = json!({
            "$defs": {"big": big},
            "properties": {"x": {"$id": "urn:x", "$defs": {"big": {"type": "string"}}, "$ref": "#/$defs/big"}}
        });
        assert!(checks(&scoped).unwrap() > MAX_CHECKS);
        assert!(checks(&json!({"$ref": "#nowhere"})).is_err());
    }
}
