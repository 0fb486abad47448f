//! Compiled schemas cached by content, so a tool list repeated on every request of a
//! conversation is compiled once, and whole catalogs cached by the exact text of the `tools`
//! array, so a repeated request costs one hash and one lookup.

use super::{tool_list, SchemaError, ToolCatalog, ToolSchema};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

type Entries = HashMap<u64, Vec<(Value, Arc<ToolSchema>)>>;
type TextEntries = HashMap<String, Result<Arc<ToolSchema>, SchemaError>>;
type Catalogs = HashMap<u64, Vec<(Box<[u8]>, Option<Arc<ToolCatalog>>)>>;

/// Distinct `tools` arrays kept (each holds its text, tens of KB for Claude Code).
const CATALOG_CAPACITY: usize = 64;

/// Bounded cache from a schema's content to its compiled form.
pub struct SchemaCache {
    capacity: usize,
    entries: Mutex<Entries>,
    /// By the schema's exact JSON text, for callers that have the text (JSON Lines records).
    texts: Mutex<TextEntries>,
    /// By the exact text of a request's `tools` array.
    catalogs: Mutex<Catalogs>,
}

impl SchemaCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            entries: Mutex::new(HashMap::new()),
            texts: Mutex::new(HashMap::new()),
            catalogs: Mutex::new(HashMap::new()),
        }
    }

    /// The catalog of a `tools` array given as its JSON text; `None` when the text is not an
    /// array (or not UTF-8) or names no tool with a schema. Built on first sight of the exact
    /// text, which is compared as bytes (a repeated text is not validated as UTF-8 again).
    pub fn catalog_for_text(&self, tools: &[u8]) -> Option<Arc<ToolCatalog>> {
        let key = sampled_hash(tools);
        if let Some(bucket) = self.catalogs.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            if let Some((_, found)) = bucket.iter().find(|(text, _)| **text == *tools) {
                return found.clone();
            }
        }
        let built = serde_json::from_slice::<Value>(tools).ok().and_then(|value| {
            let list = value.as_array().and_then(|_| tool_list(&value))?;
            let mut catalog = ToolCatalog::default();
            catalog.add_all(list, Some(self));
            (!catalog.is_empty()).then(|| Arc::new(catalog))
        });
        let mut catalogs = self.catalogs.lock().unwrap_or_else(|p| p.into_inner());
        // Entries, not buckets: texts that share a sample must not grow one bucket unbounded.
        if catalogs.values().map(Vec::len).sum::<usize>() >= CATALOG_CAPACITY {
            catalogs.clear();
        }
        let bucket = catalogs.entry(key).or_default();
        if !bucket.iter().any(|(text, _)| **text == *tools) {
            bucket.push((tools.into(), built.clone()));
        }
        built
    }

    /// The compiled schema for a schema's JSON text; the text is parsed only on first sight.
    pub fn get_or_compile_text(&self, text: &str) -> Result<Arc<ToolSchema>, SchemaError> {
        let mut texts = self.texts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = texts.get(text) {
            return found.clone();
        }
        let compiled = match serde_json::from_str::<Value>(text) {
            Ok(schema) => self.get_or_compile(&schema),
            Err(error) => Err(SchemaError::at("", format!("not JSON: {error}"))),
        };
        if texts.len() >= self.capacity {
            texts.clear();
        }
        texts.insert(text.to_string(), compiled.clone());
        compiled
    }

    /// The compiled schema, compiling it on first sight.
    pub fn get_or_compile(&self, schema: &Value) -> Result<Arc<ToolSchema>, SchemaError> {
        let key = content_hash(schema);
        if let Some(found) = self.lock().get(&key).and_then(|bucket| bucket.iter().find(|(s, _)| s == schema)) {
            return Ok(found.1.clone());
        }
        let compiled = Arc::new(ToolSchema::compile(schema)?);
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            // Tool sets change rarely; dropping everything keeps memory bounded without LRU
            // bookkeeping on the hot path.
            entries.clear();
        }
        entries.entry(key).or_default().push((schema.clone(), compiled.clone()));
        Ok(compiled)
    }

    pub fn len(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A hash of a JSON value's content, computed without serializing it.
fn content_hash(value: &Value) -> u64 {
    fn feed(value: &Value, hasher: &mut DefaultHasher) {
        match value {
            Value::Null => 0u8.hash(hasher),
            Value::Bool(b) => (1u8, b).hash(hasher),
            Value::Number(n) => (2u8, n.to_string()).hash(hasher),
            Value::String(s) => (3u8, s).hash(hasher),
            Value::Array(items) => {
                (4u8, items.len()).hash(hasher);
                items.iter().for_each(|item| feed(item, hasher));
            }
            Value::Object(map) => {
                (5u8, map.len()).hash(hasher);
                for (key, item) in map {
                    key.hash(hasher);
                    feed(item, hasher);
                }
            }
        }
    }
    let mut hasher = DefaultHasher::new();
    feed(value, &mut hasher);
    hasher.finish()
}

/// A hash of a `tools` text's length and its two ends, not of all its tens of KB: the lookup
/// compares the whole text anyway, so texts that share a sample only share a bucket.
fn sampled_hash(bytes: &[u8]) -> u64 {
    const SAMPLE: usize = 512;
    let mut hasher = DefaultHasher::new();
    bytes.len().hash(&mut hasher);
    bytes[..bytes.len().min(SAMPLE)].hash(&mut hasher);
    bytes[bytes.len().saturating_sub(SAMPLE)..].hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_schema_compiles_once_and_different_ones_apart() {
        let cache = SchemaCache::new(8);
        let a = cache.get_or_compile(&json!({"type": "object", "properties": {"a": {"type": "string"}}})).unwrap();
        let again = cache.get_or_compile(&json!({"type": "object", "properties": {"a": {"type": "string"}}})).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        cache.get_or_compile(&json!({"type": "object", "properties": {"a": {"type": "integer"}}})).unwrap();
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_tools_array_seen_again_gives_the_same_catalog_and_malformed_ones_none() {
        let cache = SchemaCache::new(8);
        let tools = r#"[{"name": "a", "input_schema": {"type": "object"}}, {"name": "b"}]"#;
        let first = cache.catalog_for_text(tools.as_bytes()).unwrap();
        assert!(Arc::ptr_eq(&first, &cache.catalog_for_text(tools.as_bytes()).unwrap()));
        assert!(matches!(first.get("a"), Some(Ok(_))));
        assert_eq!(first.len(), 1, "a tool without a schema is not in the catalog");
        let spaced = r#"[{"name": "a",  "input_schema": {"type": "object"}}]"#;
        assert!(!Arc::ptr_eq(&first, &cache.catalog_for_text(spaced.as_bytes()).unwrap()), "keyed by the exact text");
        for malformed in [r#"{"name": "a", "input_schema": {}}"#, r#"[1, "x"]"#, "[]", "[{\"name\": "] {
            assert!(cache.catalog_for_text(malformed.as_bytes()).is_none(), "{malformed}");
        }
        let not_utf8 = b"[{\"name\": \"a\xff\", \"input_schema\": {\"type\": \"object\"}}]";
        assert!(cache.catalog_for_text(not_utf8).is_none(), "a name that is not UTF-8");
    }

    #[test]
    fn texts_that_share_their_ends_get_their_own_catalogs() {
        let cache = SchemaCache::new(8);
        let pad = " ".repeat(2000);
        let tools = |kind: &str| {
            format!(
                r#"[{{"name": "a",{pad}"input_schema": {{"type": "object", "properties": {{"x": {{"type": "{kind}"}}}}}}}}{pad}]"#
            )
        };
        let (strings, numbers) = (tools("string"), tools("number"));
        assert_eq!(strings.len(), numbers.len());
        let first = cache.catalog_for_text(strings.as_bytes()).unwrap();
        let second = cache.catalog_for_text(numbers.as_bytes()).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        let valid = |catalog: &ToolCatalog| {
            catalog.get("a").unwrap().as_ref().unwrap().first_violation(&json!({"x": "s"})).is_none()
        };
        assert!(valid(&first) && !valid(&second));
        assert!(Arc::ptr_eq(&second, &cache.catalog_for_text(numbers.as_bytes()).unwrap()));
    }
}
