//! Schema composition folded into shapes, so that a name declared through `allOf`, beside an
//! `anyOf`/`oneOf` list of `required`, behind a `$ref` or in `then`/`else` guides the parse as a
//! flat property does. Two jobs, both on the compiled shapes:
//!
//! - [`meet`]: the shape of a value that must fit every part (`allOf`, and the keywords beside
//!   a combinator). Objects merge their properties; a union is distributed over the other part,
//!   so `properties` beside `anyOf: [{required: [a]}, {required: [b]}]` becomes one merged
//!   object per branch. Where parts disagree on a type the result is their union: the shape
//!   over-declares rather than hide a reading (the validator still has the last word).
//! - [`property_unions`]: for every union, each declared name's shape as the union of what every
//!   branch reads there, so a name typed differently in two branches is parsed under both.

use super::shape::{ObjectShape, Shape, ShapeId, MAX_SCHEMA_DEPTH};
use std::collections::{HashMap, HashSet};

/// Shapes one [`meet`] may add before it gives up for the plain union of its parts: distributing
/// unions over each other multiplies their branches.
const MEET_BUDGET: usize = 512;

/// Unions [`property_unions`] may add in all (one per name whose branches disagree).
const PROPERTY_UNION_BUDGET: usize = 4096;

/// The shape of a value that fits every one of `parts` (their union when the merge grows too
/// large: every name any part declares is still seen).
pub(super) fn meet(shapes: &mut Vec<Shape>, parts: &[ShapeId]) -> ShapeId {
    // A part that says nothing (`{}`, the keywords beside a lone `allOf`) adds nothing.
    let parts: Vec<ShapeId> = parts.iter().copied().filter(|id| shapes[id.0] != Shape::Any).collect();
    let Some((&first, rest)) = parts.split_first() else {
        return ShapeId::ANY;
    };
    let start = shapes.len();
    let mut merger = Merger { shapes, memo: HashMap::new(), referenced: HashSet::new(), budget: MEET_BUDGET };
    let merged = rest.iter().try_fold(first, |acc, &part| merger.meet(acc, part, 0));
    match merged {
        Some(id) => id,
        None => {
            // Nothing outside this merge refers to what it added.
            shapes.truncate(start);
            union_of(shapes, parts)
        }
    }
}

struct Merger<'a> {
    shapes: &'a mut Vec<Shape>,
    /// Merges under way or done: a recursive schema meets itself again through its `$ref`.
    memo: HashMap<(ShapeId, ShapeId), ShapeId>,
    /// Reserved slots a merge met again before it was done.
    referenced: HashSet<ShapeId>,
    budget: usize,
}

impl Merger<'_> {
    fn push(&mut self, shape: Shape) -> Option<ShapeId> {
        self.budget = self.budget.checked_sub(1)?;
        self.shapes.push(shape);
        Some(ShapeId(self.shapes.len() - 1))
    }

    fn union(&mut self, ids: Vec<ShapeId>) -> Option<ShapeId> {
        self.budget = self.budget.checked_sub(1)?;
        Some(union_of(self.shapes, ids))
    }

    fn meet(&mut self, a: ShapeId, b: ShapeId, depth: usize) -> Option<ShapeId> {
        if a == b || self.shapes[b.0] == Shape::Any {
            return Some(a);
        }
        if self.shapes[a.0] == Shape::Any {
            return Some(b);
        }
        if depth > MAX_SCHEMA_DEPTH {
            return None;
        }
        if let Some(&done) = self.memo.get(&(a, b)) {
            if self.shapes[done.0] == Shape::Pending {
                self.referenced.insert(done);
            }
            return Some(done);
        }
        // Reserved first, as `$ref`s are: a recursive merge refers back to this slot.
        let slot = self.push(Shape::Pending)?;
        self.memo.insert((a, b), slot);
        let merged = self.merge(a, b, depth)?;
        if self.referenced.contains(&slot) {
            self.shapes[slot.0] = Shape::Union(vec![merged]);
            return Some(slot);
        }
        // Nothing refers to the slot: the merge stands for itself.
        self.shapes[slot.0] = Shape::Any;
        self.memo.insert((a, b), merged);
        Some(merged)
    }

    fn merge(&mut self, a: ShapeId, b: ShapeId, depth: usize) -> Option<ShapeId> {
        let (left, right) = (self.shapes[a.0].clone(), self.shapes[b.0].clone());
        match (left, right) {
            (Shape::Any, _) => Some(b),
            (_, Shape::Any) => Some(a),
            // A `$ref` (or merge) still being compiled: nothing to merge yet, so either.
            (Shape::Pending, _) | (_, Shape::Pending) => self.union(vec![a, b]),
            (Shape::Union(branches), _) => self.distribute(&branches, b, depth),
            (_, Shape::Union(branches)) => self.distribute(&branches, a, depth),
            (Shape::Object(x), Shape::Object(y)) => {
                let object = self.merge_objects(x, y, depth)?;
                self.push(Shape::Object(object))
            }
            (Shape::Array { items: x }, Shape::Array { items: y }) => {
                let items = self.meet(x, y, depth + 1)?;
                self.push(Shape::Array { items })
            }
            (Shape::Integer, Shape::Number) => Some(a),
            (Shape::Number, Shape::Integer) => Some(b),
            (Shape::String { allowed: x }, Shape::String { allowed: y }) => match (x, y) {
                (None, _) => Some(b),
                (_, None) => Some(a),
                (Some(x), Some(y)) => {
                    let both: Vec<String> = x.iter().filter(|v| y.contains(v)).cloned().collect();
                    match both.is_empty() {
                        true => self.union(vec![a, b]),
                        false => self.push(Shape::String { allowed: Some(both) }),
                    }
                }
            },
            // Listed values say more than a type.
            (Shape::Literal(_), _) => Some(a),
            (_, Shape::Literal(_)) => Some(b),
            (x, y) if x == y => Some(a),
            // Parts that disagree: the value is read under both.
            _ => self.union(vec![a, b]),
        }
    }

    /// Each branch met with `other`: one alternative per branch.
    fn distribute(&mut self, branches: &[ShapeId], other: ShapeId, depth: usize) -> Option<ShapeId> {
        let mut met = Vec::with_capacity(branches.len());
        for &branch in branches {
            met.push(self.meet(branch, other, depth + 1)?);
        }
        match met.as_slice() {
            [one] => Some(*one),
            _ => self.union(met),
        }
    }

    /// Every name either declares; a name both declare fits both. Closed if either is (the names
    /// the other declares are still seen: more names never hide a reading).
    fn merge_objects(&mut self, x: ObjectShape, y: ObjectShape, depth: usize) -> Option<ObjectShape> {
        let mut properties = Vec::with_capacity(x.properties.len() + y.properties.len());
        for (name, id) in &x.properties {
            let id = match y.property(name).or(y.additional) {
                Some(other) => self.meet(*id, other, depth + 1)?,
                None => *id,
            };
            properties.push((name.clone(), id));
        }
        for (name, id) in &y.properties {
            if x.property(name).is_some() {
                continue;
            }
            let id = match x.additional {
                Some(other) => self.meet(other, *id, depth + 1)?,
                None => *id,
            };
            properties.push((name.clone(), id));
        }
        let mut required = x.required;
        for name in y.required {
            if !required.contains(&name) {
                required.push(name);
            }
        }
        let additional = match (x.additional, y.additional) {
            (Some(p), Some(q)) => Some(self.meet(p, q, depth + 1)?),
            _ => None,
        };
        Some(ObjectShape { properties, required, additional })
    }
}

/// A union of `ids`, each once; one id stands alone.
fn union_of(shapes: &mut Vec<Shape>, ids: Vec<ShapeId>) -> ShapeId {
    match distinct(shapes, ids).as_slice() {
        [one] => *one,
        many => {
            shapes.push(Shape::Union(many.to_vec()));
            ShapeId(shapes.len() - 1)
        }
    }
}

/// `ids` in order, each once (a leaf shape spelled twice counts once).
fn distinct(shapes: &[Shape], ids: Vec<ShapeId>) -> Vec<ShapeId> {
    let mut distinct: Vec<ShapeId> = Vec::with_capacity(ids.len());
    for id in ids {
        let same = |seen: &ShapeId| *seen == id || (is_leaf(&shapes[id.0]) && shapes[seen.0] == shapes[id.0]);
        if !distinct.iter().any(same) {
            distinct.push(id);
        }
    }
    distinct
}

fn is_leaf(shape: &Shape) -> bool {
    !matches!(shape, Shape::Object(_) | Shape::Array { .. } | Shape::Union(_) | Shape::Pending)
}

/// What a union's branches read at each name: a branch that declares the name reads its shape
/// there, an open branch its `additionalProperties`, a closed one nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct UnionMembers {
    pub(crate) properties: Vec<(String, ShapeId)>,
    /// The open branches' shapes for an undeclared name; `None` when every branch is closed.
    pub(crate) additional: Option<ShapeId>,
}

/// [`UnionMembers`] for every union that reaches an object, with the unions they need added to
/// `shapes` (and those unions' members in turn).
pub(super) fn property_unions(shapes: &mut Vec<Shape>) -> HashMap<ShapeId, UnionMembers> {
    let mut views = HashMap::new();
    let mut united = Uniter { by_branches: HashMap::new(), budget: PROPERTY_UNION_BUDGET };
    let mut next = 0;
    while next < shapes.len() {
        let id = ShapeId(next);
        next += 1;
        if !matches!(shapes[id.0], Shape::Union(_)) {
            continue;
        }
        let objects = object_branches(shapes, id);
        if objects.is_empty() {
            continue;
        }
        let mut names: Vec<&str> = Vec::new();
        for object in &objects {
            for (name, _) in &object.properties {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        let readings: Vec<(String, Vec<ShapeId>)> = names
            .iter()
            .map(|name| {
                let read = objects.iter().filter_map(|object| object.property(name).or(object.additional));
                (name.to_string(), read.collect())
            })
            .collect();
        let open: Vec<ShapeId> = objects.iter().filter_map(|object| object.additional).collect();
        let mut members = UnionMembers::default();
        for (name, read) in readings {
            members.properties.push((name, united.union(shapes, read)));
        }
        if !open.is_empty() {
            members.additional = Some(united.union(shapes, open));
        }
        views.insert(id, members);
    }
    views
}

/// Unions of a name's readings, one per set of branches.
struct Uniter {
    by_branches: HashMap<Vec<ShapeId>, ShapeId>,
    budget: usize,
}

impl Uniter {
    fn union(&mut self, shapes: &mut Vec<Shape>, read: Vec<ShapeId>) -> ShapeId {
        let read = distinct(shapes, read);
        if let [one] = read.as_slice() {
            return *one;
        }
        if let Some(&known) = self.by_branches.get(&read) {
            return known;
        }
        if self.budget == 0 {
            // Past the budget, the first branch's reading, as before unions were read whole.
            return read[0];
        }
        self.budget -= 1;
        shapes.push(Shape::Union(read.clone()));
        let id = ShapeId(shapes.len() - 1);
        self.by_branches.insert(read, id);
        id
    }
}

/// The object shapes a union reaches through its branches (nested unions followed, each once).
fn object_branches(shapes: &[Shape], id: ShapeId) -> Vec<&ObjectShape> {
    let (mut objects, mut seen, mut stack) = (Vec::new(), HashSet::from([id]), vec![id]);
    while let Some(at) = stack.pop() {
        match &shapes[at.0] {
            Shape::Union(branches) => {
                for branch in branches.iter().rev() {
                    if seen.insert(*branch) {
                        stack.push(*branch);
                    }
                }
            }
            Shape::Object(object) => objects.push(object),
            _ => {}
        }
    }
    objects
}

#[cfg(test)]
mod tests {
    use super::super::ShapeSet;
    use super::*;
    use serde_json::json;

    fn keys(set: &ShapeSet, id: ShapeId) -> Option<Vec<&str>> {
        set.known_keys(id)
    }

    #[test]
    fn names_from_every_part_are_declared_as_flat_ones_are() {
        let command = json!({"properties": {"command": {"type": "string"}}, "required": ["command"]});
        let flags = json!({"properties": {"dry_run": {"type": "boolean"}}});
        let schemas = [
            json!({"type": "object", "allOf": [command, flags]}),
            json!({"type": "object", "properties": {"command": {"type": "string"}, "dry_run": {"type": "boolean"}},
                   "anyOf": [{"required": ["command"]}, {"required": ["dry_run"]}]}),
            json!({"type": "object", "properties": {"command": {"type": "string"}, "dry_run": {"type": "boolean"}},
                   "oneOf": [{"required": ["command"]}]}),
            json!({"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], "$defs": {"a": command, "b": flags}}),
            json!({"$ref": "#/$defs/a", "properties": {"dry_run": {"type": "boolean"}}, "$defs": {"a": command}}),
            json!({"properties": {"command": {"type": "string"}},
                   "if": {"required": ["command"]}, "then": flags}),
            json!({"properties": {"command": {"type": "string"}}, "dependentSchemas": {"command": flags}}),
        ];
        for schema in schemas {
            let set = ShapeSet::compile(&schema).unwrap();
            let mut declared = keys(&set, set.root()).unwrap_or_default();
            declared.sort();
            assert_eq!(declared, ["command", "dry_run"], "{schema}");
            assert!(set.allows_undeclared(set.root()), "{schema}");
            // Where `then` or the dependent schema does not apply, the open object's reading too.
            let dry_run = set.property(set.root(), "dry_run");
            let read = match set.get(dry_run) {
                Shape::Union(branches) => branches.iter().map(|b| set.get(*b)).collect(),
                one => vec![one],
            };
            assert!(read.contains(&&Shape::Boolean), "{schema}: {read:?}");
        }
    }

    #[test]
    fn closed_parts_and_unevaluated_properties_close_the_merged_object() {
        let parts = json!([{"properties": {"command": {"type": "string"}}},
                           {"properties": {"dry_run": {"type": "boolean"}}}]);
        for schema in [
            json!({"type": "object", "allOf": parts, "unevaluatedProperties": false}),
            json!({"allOf": [{"properties": {"command": {"type": "string"}}, "additionalProperties": false},
                             {"properties": {"dry_run": {"type": "boolean"}}}]}),
            json!({"properties": {"command": {"type": "string"}, "dry_run": {"type": "boolean"}},
                   "additionalProperties": false, "anyOf": [{"required": ["command"]}, {"required": ["dry_run"]}]}),
            json!({"properties": {"command": {"type": "string"}, "dry_run": {"type": "boolean"}},
                   "unevaluatedProperties": false}),
        ] {
            let set = ShapeSet::compile(&schema).unwrap();
            assert!(!set.allows_undeclared(set.root()), "{schema}");
            assert_eq!(keys(&set, set.root()).map(|k| k.len()), Some(2), "{schema}");
        }
    }

    #[test]
    fn a_name_typed_differently_in_two_branches_is_their_union() {
        let set = ShapeSet::compile(&json!({"anyOf": [
            {"properties": {"timeout": {"type": "integer"}}},
            {"properties": {"timeout": {"type": "string"}}, "additionalProperties": false}
        ]}))
        .unwrap();
        let timeout = set.property(set.root(), "timeout");
        let Shape::Union(branches) = set.get(timeout) else { panic!("{:?}", set.get(timeout)) };
        let read: Vec<&Shape> = branches.iter().map(|b| set.get(*b)).collect();
        assert_eq!(read, [&Shape::Integer, &Shape::String { allowed: None }]);
        // An undeclared name: the open branch's reading only.
        assert_eq!(set.get(set.property(set.root(), "other")), &Shape::Any);
    }

    #[test]
    fn parts_that_agree_merge_into_one_shape() {
        let set = ShapeSet::compile(&json!({"allOf": [
            {"properties": {"n": {"type": "number"}, "kind": {"enum": ["a", "b"]}}},
            {"properties": {"n": {"type": "integer", "minimum": 1}, "kind": {"enum": ["b", "c"]}}}
        ]}))
        .unwrap();
        assert_eq!(set.get(set.property(set.root(), "n")), &Shape::Integer);
        assert_eq!(set.get(set.property(set.root(), "kind")), &Shape::String { allowed: Some(vec!["b".into()]) });
    }

    #[test]
    fn recursive_parts_and_large_products_compile() {
        let set = ShapeSet::compile(&json!({
            "allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}],
            "$defs": {"a": {"properties": {"child": {"$ref": "#/$defs/a"}, "x": {"type": "string"}}},
                      "b": {"properties": {"child": {"$ref": "#/$defs/b"}, "y": {"type": "string"}}}}
        }))
        .unwrap();
        let child = set.property(set.root(), "child");
        let mut declared = set.known_keys(child).unwrap_or_default();
        declared.sort();
        assert_eq!(declared, ["child", "x", "y"]);
        // Ten two-way unions met together: past the budget, their plain union still declares all.
        let parts: Vec<_> = (0..10)
            .map(|i| {
                json!({"anyOf": [{"properties": {format!("a{i}"): {"type": "string"}}},
                                      {"properties": {format!("b{i}"): {"type": "string"}}}]})
            })
            .collect();
        let set = ShapeSet::compile(&json!({"allOf": parts})).unwrap();
        assert_eq!(set.known_keys(set.root()).map(|k| k.len()), Some(20));
    }
}
