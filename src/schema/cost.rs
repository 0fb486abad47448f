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
    let whole = counter.cost(schema)?;
    let along_paths = Paths { counter: &counter, in_place: HashMap::new(), open: HashSet::new() }.deepest(schema)?;
    Ok(whole.max(along_paths))
}

/// Nodes of the schema, by address, with how many ways they apply.
type Applied<'a> = HashMap<*const Value, (u64, &'a Value)>;

/// Where a child subschema applies: to a named member, to any member, to an item.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Child<'a> {
    Named(&'a str),
    AnyMember,
    Item,
}

/// The count above takes a reference back into a schema being counted as one check: the value's
/// depth bounds recursion. That holds only while each level applies the recursive schema once
/// to a node: `{"anyOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}]}` applies it twice to
/// each item, so 2^depth times at depth `depth` (the review of round 24: 42 s for a 54-byte
/// input). This follows one path into a value, level by level, counting with multiplicity the
/// subschemas that apply to its node there (the dearest member or item at each level).
struct Paths<'c, 'a> {
    counter: &'c Counter<'a>,
    in_place: HashMap<*const Value, Applied<'a>>,
    open: HashSet<*const Value>,
}

/// Levels followed: past this a value is refused as too deep anyway.
const MAX_LEVELS: usize = 130;

impl<'a> Paths<'_, 'a> {
    fn deepest(mut self, root: &'a Value) -> Result<u64, String> {
        let mut level: Applied<'a> = HashMap::from([(root as *const Value, (1, root))]);
        let mut dearest = 0;
        for _ in 0..MAX_LEVELS {
            let mut applied: Applied<'a> = HashMap::new();
            for (count, node) in level.values() {
                for (key, (ways, sub)) in self.applied_in_place(node)? {
                    let entry = applied.entry(key).or_insert((0, sub));
                    entry.0 = entry.0.saturating_add(count.saturating_mul(ways));
                }
            }
            let total = applied.values().fold(0u64, |sum, (n, _)| sum.saturating_add(*n));
            dearest = dearest.max(total);
            if total > MAX_CHECKS {
                return Ok(total);
            }
            level = next_level(&applied);
            if level.is_empty() {
                break;
            }
        }
        Ok(dearest)
    }

    /// `node` and what applies to the same value through it (`allOf`, `$ref`, …), with ways.
    fn applied_in_place(&mut self, node: &'a Value) -> Result<Applied<'a>, String> {
        let key = node as *const Value;
        if let Some(done) = self.in_place.get(&key) {
            return Ok(done.clone());
        }
        let mut applied: Applied<'a> = HashMap::from([(key, (1, node))]);
        let Value::Object(map) = node else { return Ok(applied) };
        if !self.open.insert(key) {
            // A schema that applies itself to the same value never ends a check.
            return Err(
                "a subschema applies itself to the same value (a $ref cycle with no member or item between)".into()
            );
        }
        let mut parts: Vec<&'a Value> = Vec::new();
        for name in ["allOf", "anyOf", "oneOf"] {
            parts.extend(map.get(name).and_then(Value::as_array).into_iter().flatten());
        }
        for name in ["not", "if", "then", "else"] {
            parts.extend(map.get(name));
        }
        parts.extend(map.get("dependentSchemas").and_then(Value::as_object).into_iter().flat_map(|m| m.values()));
        for name in ["$ref", "$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.get(name).and_then(Value::as_str) {
                parts.extend(self.counter.resolve(reference)?);
            }
        }
        for part in parts {
            for (sub_key, (ways, sub)) in self.applied_in_place(part)? {
                let entry = applied.entry(sub_key).or_insert((0, sub));
                entry.0 = entry.0.saturating_add(ways);
            }
        }
        self.open.remove(&key);
        self.in_place.insert(key, applied.clone());
        Ok(applied)
    }
}

/// What applies one level down, at the dearest member or item: for each named member, its own
/// subschemas and those for any member; for items, theirs.
fn next_level<'a>(applied: &Applied<'a>) -> Applied<'a> {
    let mut by_child: HashMap<Child<'a>, Applied<'a>> = HashMap::new();
    for (count, node) in applied.values() {
        for (child, sub) in children(node) {
            let entry = by_child.entry(child).or_default().entry(sub as *const Value).or_insert((0, sub));
            entry.0 = entry.0.saturating_add(*count);
        }
    }
    let any_member = by_child.get(&Child::AnyMember).cloned().unwrap_or_default();
    let total = |set: &Applied<'a>| set.values().fold(0u64, |sum, (n, _)| sum.saturating_add(*n));
    let mut dearest: Applied<'a> = HashMap::new();
    for (child, set) in &by_child {
        let mut set = set.clone();
        if matches!(child, Child::Named(_)) {
            for (key, (n, sub)) in &any_member {
                let entry = set.entry(*key).or_insert((0, sub));
                entry.0 = entry.0.saturating_add(*n);
            }
        }
        if total(&set) > total(&dearest) {
            dearest = set;
        }
    }
    dearest
}

/// The subschemas `node` applies to its members and items.
fn children(node: &Value) -> Vec<(Child<'_>, &Value)> {
    let Value::Object(map) = node else { return Vec::new() };
    let mut found = Vec::new();
    for (name, sub) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
        found.push((Child::Named(name.as_str()), sub));
    }
    for sub in map.get("patternProperties").and_then(Value::as_object).into_iter().flat_map(|m| m.values()) {
        found.push((Child::AnyMember, sub));
    }
    for name in ["additionalProperties", "unevaluatedProperties", "propertyNames"] {
        found.extend(map.get(name).map(|sub| (Child::AnyMember, sub)));
    }
    for name in ["items", "prefixItems", "additionalItems", "contains", "unevaluatedItems"] {
        match map.get(name) {
            Some(Value::Array(list)) => found.extend(list.iter().map(|sub| (Child::Item, sub))),
            Some(sub) => found.push((Child::Item, sub)),
            None => {}
        }
    }
    found
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
    /// Nodes being counted: a reference back to one is recursion, counted once here; how
    /// often each level of a value applies it is [`Paths`]'s question.
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
    fn recursion_that_applies_a_schema_twice_to_one_value_is_counted_per_level() {
        // Each level applies `n` twice to the item below: 2^depth checks at depth `depth`.
        let twice = json!({"$defs": {"n": {"anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/n"}},
            {"type": "array", "minItems": 0, "items": {"$ref": "#/$defs/n"}}]}},
            "$ref": "#/$defs/n"});
        assert!(checks(&twice).unwrap() > MAX_CHECKS);
        // A tree applies its node once to each child, and a nullable child once: linear.
        let tree = json!({"$defs": {"node": {"type": "object", "properties": {
            "left": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]},
            "right": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]},
            "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            "meta": {"additionalProperties": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"});
        assert!(checks(&tree).unwrap() < 100, "{:?}", checks(&tree));
        assert!(checks(&json!({"$ref": "#"})).is_err(), "applies itself forever");
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
