//! The part of a JSON Schema that guides repair: types, properties, items, enums, unions.
//! Everything else (ranges, patterns, formats) is left to the validator.

use super::compose::{self, UnionMembers};
use super::SchemaError;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Nesting of schema keywords followed before compilation gives up.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;

/// Index of a shape inside its [`ShapeSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShapeId(pub(super) usize);

impl ShapeId {
    /// The set's first shape: [`Shape::Any`].
    pub(super) const ANY: ShapeId = ShapeId(0);
}

#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// No constraint the repair can use.
    Any,
    Object(ObjectShape),
    Array {
        items: ShapeId,
    },
    /// A string, optionally limited to the listed values (`enum` / `const`).
    String {
        allowed: Option<Vec<String>>,
    },
    Integer,
    Number,
    Boolean,
    Null,
    /// Values that must equal one of these (an `enum` that is not all strings).
    Literal(Vec<Value>),
    /// `anyOf`, `oneOf`, a list of types, or the alternatives of a composed schema.
    Union(Vec<ShapeId>),
    /// Placeholder while a `$ref` is being compiled; never visible after compilation.
    Pending,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectShape {
    pub properties: Vec<(String, ShapeId)>,
    pub required: Vec<String>,
    /// `None`: additional properties are forbidden.
    pub additional: Option<ShapeId>,
}

impl ObjectShape {
    pub fn property(&self, key: &str) -> Option<ShapeId> {
        self.properties.iter().find(|(name, _)| name == key).map(|(_, id)| *id)
    }
}

/// All shapes of one schema; `root` is the tool input's shape.
#[derive(Debug, Clone)]
pub struct ShapeSet {
    shapes: Vec<Shape>,
    root: ShapeId,
    /// Each union's names, read under all of its branches.
    unions: HashMap<ShapeId, UnionMembers>,
}

impl ShapeSet {
    /// A set that guides nothing: repair without a schema (generic mode).
    pub fn generic() -> Self {
        Self { shapes: vec![Shape::Any], root: ShapeId::ANY, unions: HashMap::new() }
    }

    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let mut compiler = Compiler { document: schema, shapes: vec![Shape::Any], by_ref: HashMap::new() };
        let root = compiler.compile(schema, "", 0)?;
        let mut shapes = compiler.shapes;
        let unions = compose::property_unions(&mut shapes);
        Ok(Self { shapes, root, unions })
    }

    pub fn root(&self) -> ShapeId {
        self.root
    }

    pub fn any(&self) -> ShapeId {
        ShapeId(0)
    }

    pub fn get(&self, id: ShapeId) -> &Shape {
        &self.shapes[id.0]
    }

    /// The shape of `key`'s value inside an object of shape `id`. In a union, the union of what
    /// every branch reads there: a name typed differently in two branches has both readings.
    pub fn property(&self, id: ShapeId, key: &str) -> ShapeId {
        if let Some(members) = self.unions.get(&id) {
            let declared = members.properties.iter().find(|(name, _)| name == key).map(|(_, id)| *id);
            return declared.or(members.additional).unwrap_or(self.any());
        }
        self.find_map(id, &mut |shape| match shape {
            Shape::Object(object) => object.property(key).or(object.additional),
            _ => None,
        })
        .unwrap_or(self.any())
    }

    /// The items' shape of an array of shape `id`.
    pub fn items(&self, id: ShapeId) -> ShapeId {
        self.find_map(id, &mut |shape| match shape {
            Shape::Array { items } => Some(*items),
            _ => None,
        })
        .unwrap_or(self.any())
    }

    /// The property names an object of shape `id` declares; `None` when any key is expected
    /// (no schema, or a map with only `additionalProperties`).
    pub fn known_keys(&self, id: ShapeId) -> Option<Vec<&str>> {
        let mut keys = Vec::new();
        let (mut open, mut objects) = (false, 0);
        self.visit(id, 0, &mut |shape| match shape {
            Shape::Object(object) if !object.properties.is_empty() => {
                objects += 1;
                keys.extend(object.properties.iter().map(|(k, _)| k.as_str()))
            }
            Shape::Object(_) | Shape::Any => open = true,
            _ => {}
        });
        if objects > 1 {
            // Branches of a composed schema share names: each once.
            let mut seen = std::collections::HashSet::new();
            keys.retain(|key| seen.insert(*key));
        }
        (!open).then_some(keys)
    }

    /// Every key some object of shape `id` declares, in any branch, even where another branch
    /// is open (where [`Self::known_keys`] gives up): a key one branch declares may be the tool's.
    pub fn mentioned_keys(&self, id: ShapeId) -> Vec<&str> {
        let mut keys = Vec::new();
        self.visit(id, 0, &mut |shape| {
            if let Shape::Object(object) = shape {
                keys.extend(object.properties.iter().map(|(k, _)| k.as_str()));
            }
        });
        keys
    }

    /// Whether an object of shape `id` takes properties it does not declare (no
    /// `additionalProperties: false`, as pydantic and FastMCP schemas leave it).
    pub fn allows_undeclared(&self, id: ShapeId) -> bool {
        let mut open = false;
        self.visit(id, 0, &mut |shape| match shape {
            Shape::Object(object) => open |= object.additional.is_some(),
            Shape::Any => open = true,
            _ => {}
        });
        open
    }

    /// Whether a value of shape `id` may be an array and may not be a string: where an
    /// unbracketed list of items is read as an array.
    pub fn expects_list(&self, id: ShapeId) -> bool {
        let (mut array, mut string) = (false, false);
        self.visit(id, 0, &mut |shape| match shape {
            Shape::Array { .. } => array = true,
            Shape::String { .. } | Shape::Any => string = true,
            _ => {}
        });
        array && !string
    }

    /// Whether the schema says a value here may be text or a list: where unquoted runs may
    /// hold commas and line breaks.
    pub fn is_textual(&self, id: ShapeId) -> bool {
        let mut textual = false;
        self.visit(id, 0, &mut |shape| {
            textual |= matches!(shape, Shape::String { .. } | Shape::Array { .. });
        });
        textual
    }

    /// Whether some branch of shape `id` may take a value of `value`'s kind (and, for an
    /// enum or a literal, that value): a loose fit, ranges and patterns left to the validator.
    pub fn may_take(&self, id: ShapeId, value: &Value) -> bool {
        let mut takes = false;
        self.visit(id, 0, &mut |shape| {
            takes |= match (shape, value) {
                (Shape::Any, _) => true,
                (Shape::Object(_), Value::Object(_)) | (Shape::Array { .. }, Value::Array(_)) => true,
                (Shape::String { allowed: None }, Value::String(_)) => true,
                (Shape::String { allowed: Some(allowed) }, Value::String(text)) => allowed.contains(text),
                (Shape::Number, Value::Number(_)) | (Shape::Boolean, Value::Bool(_)) | (Shape::Null, Value::Null) => {
                    true
                }
                (Shape::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
                (Shape::Literal(values), _) => values.contains(value),
                _ => false,
            };
        });
        takes
    }

    /// Whether an enum (or literal) branch of shape `id` names `word` and no branch takes any
    /// text: only then does a bare word there tell it is that value.
    pub fn enum_names(&self, id: ShapeId, word: &str) -> bool {
        let (mut names, mut any_text) = (false, false);
        self.visit(id, 0, &mut |shape| match shape {
            Shape::String { allowed: Some(allowed) } => names |= allowed.iter().any(|a| a == word),
            Shape::Literal(values) => names |= values.iter().any(|v| v.as_str() == Some(word)),
            Shape::String { allowed: None } | Shape::Any => any_text = true,
            _ => {}
        });
        names && !any_text
    }

    /// Whether some branch of shape `id` is an array (or anything).
    pub fn may_be_array(&self, id: ShapeId) -> bool {
        self.may_take(id, &Value::Array(Vec::new()))
    }

    /// Whether every value of shape `id` is a scalar: no branch takes an object or an array.
    pub fn holds_only_scalars(&self, id: ShapeId) -> bool {
        let mut scalar = true;
        self.visit(id, 0, &mut |shape| {
            scalar &= !matches!(shape, Shape::Any | Shape::Object(_) | Shape::Array { .. } | Shape::Pending);
        });
        scalar
    }

    /// Whether nothing constrains a value of shape `id` (it may be text as well as anything).
    pub fn is_unconstrained(&self, id: ShapeId) -> bool {
        let mut any = false;
        self.visit(id, 0, &mut |shape| any |= matches!(shape, Shape::Any));
        any
    }

    fn find_map<'a, T>(&'a self, id: ShapeId, f: &mut impl FnMut(&'a Shape) -> Option<T>) -> Option<T> {
        let mut found = None;
        self.visit(id, 0, &mut |shape| {
            if found.is_none() {
                found = f(shape);
            }
        });
        found
    }

    /// Calls `f` on `id` and, through unions, on every branch (bounded: unions may refer to
    /// themselves).
    fn visit<'a>(&'a self, id: ShapeId, depth: usize, f: &mut impl FnMut(&'a Shape)) {
        if depth > MAX_SCHEMA_DEPTH {
            return;
        }
        match self.get(id) {
            Shape::Union(branches) => {
                for branch in branches {
                    self.visit(*branch, depth + 1, f);
                }
            }
            other => f(other),
        }
    }
}

struct Compiler<'a> {
    document: &'a Value,
    shapes: Vec<Shape>,
    by_ref: HashMap<String, ShapeId>,
}

impl Compiler<'_> {
    fn push(&mut self, shape: Shape) -> ShapeId {
        self.shapes.push(shape);
        ShapeId(self.shapes.len() - 1)
    }

    fn compile(&mut self, schema: &Value, pointer: &str, depth: usize) -> Result<ShapeId, SchemaError> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(SchemaError::at(pointer, "schema nested too deeply"));
        }
        let object = match schema {
            Value::Bool(_) => return Ok(self.push(Shape::Any)),
            Value::Object(object) => object,
            _ => return Err(SchemaError::at(pointer, "expected an object or a boolean")),
        };
        // The keywords beside a combinator or a `$ref` hold for the value too: every part is
        // met (`properties` beside `anyOf: [{required: [a]}, …]` declares its names in each).
        let mut parts = vec![self.compile_typed(object, pointer, depth)?];
        if let Some(reference) = object.get("$ref") {
            parts.push(self.compile_ref(reference, pointer, depth)?);
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = object.get(keyword) {
                parts.push(self.compile_union(branches, &format!("{pointer}/{keyword}"), depth)?);
            }
        }
        if let Some(Value::Array(list)) = object.get("allOf") {
            for (index, part) in list.iter().enumerate() {
                parts.push(self.compile(part, &format!("{pointer}/allOf/{index}"), depth + 1)?);
            }
        }
        parts.extend(self.compile_conditional(object, pointer, depth)?);
        parts.extend(self.compile_dependent(object, pointer, depth)?);
        Ok(compose::meet(&mut self.shapes, &parts))
    }

    /// `if`/`then`/`else`: the value fits `if` and `then`, or `else`.
    fn compile_conditional(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<Option<ShapeId>, SchemaError> {
        let (Some(condition), then, otherwise) = (object.get("if"), object.get("then"), object.get("else")) else {
            return Ok(None);
        };
        if then.is_none() && otherwise.is_none() {
            return Ok(None);
        }
        let mut holds = vec![self.compile(condition, &format!("{pointer}/if"), depth + 1)?];
        if let Some(then) = then {
            holds.push(self.compile(then, &format!("{pointer}/then"), depth + 1)?);
        }
        let holds = compose::meet(&mut self.shapes, &holds);
        let fails = match otherwise {
            Some(otherwise) => self.compile(otherwise, &format!("{pointer}/else"), depth + 1)?,
            None => ShapeId::ANY,
        };
        Ok(Some(self.push(Shape::Union(vec![holds, fails]))))
    }

    /// `dependentSchemas` (and `dependencies` given as schemas): each applies or not, as its
    /// name is present or not.
    fn compile_dependent(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<Vec<ShapeId>, SchemaError> {
        let mut parts = Vec::new();
        for keyword in ["dependentSchemas", "dependencies"] {
            let Some(Value::Object(map)) = object.get(keyword) else { continue };
            for (name, schema) in map {
                if !matches!(schema, Value::Object(_)) {
                    continue;
                }
                let at = format!("{pointer}/{keyword}/{}", escape_pointer(name));
                let applies = self.compile(schema, &at, depth + 1)?;
                parts.push(self.push(Shape::Union(vec![applies, ShapeId::ANY])));
            }
        }
        Ok(parts)
    }

    fn compile_ref(&mut self, reference: &Value, pointer: &str, depth: usize) -> Result<ShapeId, SchemaError> {
        let at = format!("{pointer}/$ref");
        let Some(reference) = reference.as_str() else {
            return Err(SchemaError::at(&at, "$ref must be a string"));
        };
        let Some(target_pointer) = reference.strip_prefix('#') else {
            return Err(SchemaError::at(&at, format!("only local $ref is supported, not '{reference}'")));
        };
        if let Some(id) = self.by_ref.get(target_pointer) {
            return Ok(*id);
        }
        let Some(target) = self.document.pointer(target_pointer) else {
            return Err(SchemaError::at(&at, format!("$ref '{reference}' points at nothing")));
        };
        // Reserve the id first so recursive schemas refer back to it.
        let id = self.push(Shape::Pending);
        self.by_ref.insert(target_pointer.to_string(), id);
        let compiled = self.compile(target, target_pointer, depth + 1)?;
        self.shapes[id.0] = Shape::Union(vec![compiled]);
        Ok(id)
    }

    fn compile_union(&mut self, branches: &Value, pointer: &str, depth: usize) -> Result<ShapeId, SchemaError> {
        let Value::Array(list) = branches else {
            return Err(SchemaError::at(pointer, "expected an array of schemas"));
        };
        let mut ids = Vec::with_capacity(list.len());
        for (index, branch) in list.iter().enumerate() {
            ids.push(self.compile(branch, &format!("{pointer}/{index}"), depth + 1)?);
        }
        Ok(self.push(Shape::Union(ids)))
    }

    fn compile_typed(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<ShapeId, SchemaError> {
        let mut types: Vec<&str> = match object.get("type") {
            None => infer_types(object),
            Some(Value::String(name)) => vec![name.as_str()],
            Some(Value::Array(names)) => {
                let mut list = Vec::new();
                for name in names {
                    let Some(name) = name.as_str() else {
                        return Err(SchemaError::at(&format!("{pointer}/type"), "type names must be strings"));
                    };
                    list.push(name);
                }
                list
            }
            Some(_) => return Err(SchemaError::at(&format!("{pointer}/type"), "expected a string or an array")),
        };
        if object.get("nullable") == Some(&Value::Bool(true)) && !types.contains(&"null") {
            types.push("null");
        }
        let mut ids = Vec::with_capacity(types.len());
        for name in types {
            let shape = match name {
                "object" => self.compile_object(object, pointer, depth)?,
                "array" => Shape::Array { items: self.compile_items(object, pointer, depth)? },
                "string" => Shape::String { allowed: allowed_strings(object) },
                "integer" => Shape::Integer,
                "number" => Shape::Number,
                "boolean" => Shape::Boolean,
                "null" => Shape::Null,
                "any" => Shape::Any,
                other => return Err(SchemaError::at(&format!("{pointer}/type"), format!("unknown type '{other}'"))),
            };
            ids.push(self.push(shape));
        }
        Ok(match ids.as_slice() {
            [] => self.push(literal_or_any(object)),
            [one] => *one,
            _ => self.push(Shape::Union(ids)),
        })
    }

    /// An array's items: every schema an item may be read under — `items` (one, or draft-07's
    /// tuple list), `prefixItems`, `additionalItems`, `contains` — as one union, so the names
    /// any of them declares guide the parse (a tuple's object declares `dry_run` as `items`
    /// would).
    fn compile_items(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<ShapeId, SchemaError> {
        let mut schemas: Vec<(String, &Value)> = Vec::new();
        for keyword in ["items", "prefixItems", "additionalItems", "contains"] {
            match object.get(keyword) {
                Some(one @ (Value::Object(_) | Value::Bool(_))) => schemas.push((format!("{pointer}/{keyword}"), one)),
                Some(Value::Array(list)) => {
                    schemas.extend(list.iter().enumerate().map(|(i, item)| (format!("{pointer}/{keyword}/{i}"), item)))
                }
                _ => {}
            }
        }
        let mut ids = Vec::with_capacity(schemas.len());
        for (at, schema) in schemas {
            ids.push(self.compile(schema, &at, depth + 1)?);
        }
        Ok(match ids.as_slice() {
            [] => ShapeId(0),
            [one] => *one,
            _ => self.push(Shape::Union(ids)),
        })
    }

    fn compile_object(
        &mut self,
        object: &Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) -> Result<Shape, SchemaError> {
        let mut shape = ObjectShape::default();
        if let Some(properties) = object.get("properties") {
            let Value::Object(properties) = properties else {
                return Err(SchemaError::at(&format!("{pointer}/properties"), "expected an object"));
            };
            for (key, sub) in properties {
                let at = format!("{pointer}/properties/{}", escape_pointer(key));
                let id = self.compile(sub, &at, depth + 1)?;
                shape.properties.push((key.clone(), id));
            }
        }
        if let Some(Value::Array(required)) = object.get("required") {
            shape.required = required.iter().filter_map(|k| k.as_str().map(String::from)).collect();
        }
        // `patternProperties` takes names `properties` does not list: the object is open to
        // names the shape cannot tell, whatever `additionalProperties` says.
        let patterned = object.get("patternProperties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
        // `unevaluatedProperties` (2019-09) closes the object over the names every part
        // declares, which is what the merged shape holds.
        let rest = object.get("additionalProperties").or_else(|| object.get("unevaluatedProperties"));
        shape.additional = match rest {
            Some(Value::Bool(false)) if !patterned => None,
            Some(sub @ Value::Object(_)) => {
                Some(self.compile(sub, &format!("{pointer}/additionalProperties"), depth + 1)?)
            }
            _ => Some(ShapeId(0)),
        };
        Ok(Shape::Object(shape))
    }
}

fn infer_types(object: &Map<String, Value>) -> Vec<&'static str> {
    let object_keywords = ["properties", "additionalProperties", "unevaluatedProperties"];
    if object_keywords.iter().any(|keyword| object.contains_key(*keyword)) {
        vec!["object"]
    } else if ["items", "prefixItems", "contains"].iter().any(|keyword| object.contains_key(*keyword)) {
        vec!["array"]
    } else if allowed_strings(object).is_some() {
        vec!["string"]
    } else {
        Vec::new()
    }
}

/// `enum`/`const` when every listed value is a string.
fn allowed_strings(object: &Map<String, Value>) -> Option<Vec<String>> {
    let values: Vec<&Value> = match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(list)), _) => list.iter().collect(),
        (_, Some(value)) => vec![value],
        _ => return None,
    };
    values.iter().map(|v| v.as_str().map(String::from)).collect()
}

fn literal_or_any(object: &Map<String, Value>) -> Shape {
    match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(list)), _) => Shape::Literal(list.clone()),
        (_, Some(value)) => Shape::Literal(vec![value.clone()]),
        _ => Shape::Any,
    }
}

pub(crate) fn escape_pointer(segment: &str) -> String {
    if !segment.contains(['~', '/']) {
        // The common case, one copy (the repair engine escapes every key it meets).
        return segment.to_string();
    }
    segment.replace('~', "~0").replace('/', "~1")
}

/// `pointer` and one more segment (escaped): `format!("{pointer}/{segment}")` without the
/// formatting machinery, which the repair engine would run for every member and item.
pub(crate) fn child_pointer(pointer: &str, segment: &str) -> String {
    let mut child = String::with_capacity(pointer.len() + 1 + segment.len());
    child.push_str(pointer);
    child.push('/');
    if segment.contains(['~', '/']) {
        child.push_str(&escape_pointer(segment));
    } else {
        child.push_str(segment);
    }
    child
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compiles_properties_items_and_enums() {
        let set = ShapeSet::compile(&json!({
            "type": "object",
            "properties": {
                "market": {"type": "string", "enum": ["us", "uk"]},
                "keywords": {"type": "array", "items": {"type": "string"}}
            },
            "additionalProperties": false
        }))
        .unwrap();
        let market = set.property(set.root(), "market");
        assert_eq!(set.get(market), &Shape::String { allowed: Some(vec!["us".into(), "uk".into()]) });
        let keywords = set.property(set.root(), "keywords");
        assert!(set.expects_list(keywords));
        assert!(!set.expects_list(market));
        assert_eq!(set.known_keys(set.root()), Some(vec!["market", "keywords"]));
    }

    #[test]
    fn what_a_shape_may_take_and_which_words_its_enums_name() {
        let set = ShapeSet::compile(&json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["pending", "done"]},
                "label": {"anyOf": [{"type": "string"}, {"enum": ["pending"]}]},
                "paths": {"type": "array", "items": {"type": "string"}},
                "count": {"type": "integer"}
            }
        }))
        .unwrap();
        let [status, label, paths, count] = ["status", "label", "paths", "count"].map(|k| set.property(set.root(), k));
        assert!(set.enum_names(status, "pending") && !set.enum_names(status, "later"));
        // A branch that takes any text: a word there tells nothing.
        assert!(!set.enum_names(label, "pending"));
        assert!(set.may_be_array(paths) && !set.may_be_array(status));
        assert!(
            set.may_take(count, &json!(3)) && !set.may_take(count, &json!(3.5)) && !set.may_take(count, &json!("3"))
        );
        assert!(set.may_take(status, &json!("done")) && !set.may_take(status, &json!("later")));
    }

    #[test]
    fn resolves_local_refs_including_recursive_ones() {
        let set = ShapeSet::compile(&json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}}
        }))
        .unwrap();
        let node = set.property(set.root(), "node");
        let child = set.property(node, "child");
        assert_eq!(set.known_keys(child), Some(vec!["child"]));
    }

    #[test]
    fn type_lists_and_nullable_become_unions() {
        let set = ShapeSet::compile(&json!({"type": ["string", "array"], "items": {"type": "string"}})).unwrap();
        assert!(!set.expects_list(set.root()));
        let set = ShapeSet::compile(&json!({"type": "array", "nullable": true})).unwrap();
        assert!(set.expects_list(set.root()));
    }

    #[test]
    fn unusable_schemas_say_where() {
        let cases = [
            (json!({"properties": {"a": {"$ref": "https://example.com/x"}}}), "/properties/a/$ref"),
            (json!({"properties": {"a": {"$ref": "#/nowhere"}}}), "/properties/a/$ref"),
            (json!({"properties": {"a": {"type": "strnig"}}}), "/properties/a/type"),
            (json!({"properties": {"a": 5}}), "/properties/a"),
            (json!({"anyOf": {"type": "string"}}), "/anyOf"),
        ];
        for (schema, pointer) in cases {
            let error = ShapeSet::compile(&schema).unwrap_err();
            assert_eq!(error.pointer, pointer, "{schema}");
        }
    }
}
