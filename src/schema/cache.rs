//! Compiled schemas cached by content, so a tool list repeated on every request of a
//! conversation is compiled once.

use super::{SchemaError, ToolSchema};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

type Entries = HashMap<u64, Vec<(Value, Arc<ToolSchema>)>>;
type TextEntries = HashMap<String, Result<Arc<ToolSchema>, SchemaError>>;

/// Bounded cache from a schema's content to its compiled form.
pub struct SchemaCache {
    capacity: usize,
    entries: Mutex<Entries>,
    /// By the schema's exact JSON text, for callers that have the text (JSON Lines records).
    texts: Mutex<TextEntries>,
}

impl SchemaCache {
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), entries: Mutex::new(HashMap::new()), texts: Mutex::new(HashMap::new()) }
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
}
