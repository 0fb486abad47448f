//! Compiled schemas cached by content, so a tool list repeated on every request of a
//! conversation is compiled once, and whole catalogs cached by the exact text of the `tools`
//! array, so a repeated request costs one hash and one lookup. Each cache is bounded by entries
//! and by the bytes of schema text it keeps: a client that sends a new huge tool list with
//! every request must not grow the sidecar until it is killed.

use super::{tool_list, SchemaError, ToolCatalog, ToolSchema};
use serde_json::Value;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

type Entries = Weighed<HashMap<u64, Vec<Arc<ToolSchema>>>>;
type TextEntries = Weighed<HashMap<String, Result<Arc<ToolSchema>, SchemaError>>>;
type Catalogs = Weighed<HashMap<u64, Vec<(Box<[u8]>, Option<Arc<ToolCatalog>>)>>>;

/// Distinct `tools` arrays kept (each holds its text, tens of KB for Claude Code).
const CATALOG_CAPACITY: usize = 64;

/// A map and the bytes of text its entries hold.
#[derive(Default)]
struct Weighed<M> {
    map: M,
    bytes: usize,
}

impl<M: Default> Weighed<M> {
    /// Makes room for an entry of `bytes` under `max_bytes`, dropping everything when it does
    /// not fit (tool sets change rarely; no LRU bookkeeping on the hot path). `false`: the
    /// entry alone is over the bound and is not to be kept.
    fn make_room(&mut self, bytes: usize, max_bytes: usize) -> bool {
        if bytes > max_bytes {
            return false;
        }
        if self.bytes + bytes > max_bytes {
            *self = Self::default();
        }
        self.bytes += bytes;
        true
    }
}

/// Bounded cache from a schema's content to its compiled form.
pub struct SchemaCache {
    capacity: usize,
    max_bytes: usize,
    entries: Mutex<Entries>,
    /// By the schema's exact JSON text, for callers that have the text (JSON Lines records).
    texts: Mutex<TextEntries>,
    /// By the exact text of a request's `tools` array.
    catalogs: Mutex<Catalogs>,
}

impl SchemaCache {
    /// The default bound on the bytes of schema text each cache keeps.
    pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

    /// At most `capacity` schemas and [`Self::DEFAULT_MAX_BYTES`] of text per cache.
    pub fn new(capacity: usize) -> Self {
        Self::with_max_bytes(capacity, Self::DEFAULT_MAX_BYTES)
    }

    /// At most `capacity` schemas and `max_bytes` of schema text per cache; a text or schema
    /// larger than `max_bytes` is used for its request and not kept.
    pub fn with_max_bytes(capacity: usize, max_bytes: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            max_bytes,
            entries: Mutex::default(),
            texts: Mutex::default(),
            catalogs: Mutex::default(),
        }
    }

    /// The catalog of a `tools` array given as its JSON text; `None` when the text is not an
    /// array (or not UTF-8) or names no tool with a schema. Built on first sight of the exact
    /// text, which is compared as bytes (a repeated text is not validated as UTF-8 again).
    pub fn catalog_for_text(&self, tools: &[u8]) -> Option<Arc<ToolCatalog>> {
        let key = sampled_hash(tools);
        if let Some(bucket) = lock(&self.catalogs).map.get(&key) {
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
        let mut catalogs = lock(&self.catalogs);
        // Entries, not buckets: texts that share a sample must not grow one bucket unbounded.
        if catalogs.map.values().map(Vec::len).sum::<usize>() >= CATALOG_CAPACITY {
            *catalogs = Catalogs::default();
        }
        let known = catalogs.map.get(&key).is_some_and(|bucket| bucket.iter().any(|(text, _)| **text == *tools));
        if !known && catalogs.make_room(tools.len(), self.max_bytes) {
            catalogs.map.entry(key).or_default().push((tools.into(), built.clone()));
        }
        built
    }

    /// The compiled schema for a schema's JSON text; the text is parsed only on first sight.
    pub fn get_or_compile_text(&self, text: &str) -> Result<Arc<ToolSchema>, SchemaError> {
        let mut texts = lock(&self.texts);
        if let Some(found) = texts.map.get(text) {
            return found.clone();
        }
        let compiled = match serde_json::from_str::<Value>(text) {
            Ok(schema) => self.get_or_compile(&schema),
            Err(error) => Err(SchemaError::at("", format!("not JSON: {error}"))),
        };
        if texts.map.len() >= self.capacity {
            *texts = TextEntries::default();
        }
        if texts.make_room(text.len(), self.max_bytes) {
            texts.map.insert(text.to_string(), compiled.clone());
        }
        compiled
    }

    /// The compiled schema, compiling it on first sight.
    pub fn get_or_compile(&self, schema: &Value) -> Result<Arc<ToolSchema>, SchemaError> {
        let (key, bytes) = content_hash(schema);
        if let Some(found) =
            self.lock().map.get(&key).and_then(|bucket| bucket.iter().find(|compiled| compiled.source() == schema))
        {
            return Ok(found.clone());
        }
        let compiled = Arc::new(ToolSchema::compile(schema)?);
        let mut entries = self.lock();
        if entries.map.len() >= self.capacity {
            *entries = Entries::default();
        }
        if entries.make_room(bytes, self.max_bytes) {
            entries.map.entry(key).or_default().push(compiled.clone());
        }
        Ok(compiled)
    }

    pub fn len(&self) -> usize {
        self.lock().map.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of schema text the three caches keep (catalog texts, schema texts, compiled schemas).
    pub fn kept_bytes(&self) -> usize {
        lock(&self.catalogs).bytes + lock(&self.texts).bytes + self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        lock(&self.entries)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A hash of a JSON value's content and about the length of its JSON text, computed without
/// serializing it.
fn content_hash(value: &Value) -> (u64, usize) {
    fn feed(value: &Value, hasher: &mut DefaultHasher) -> usize {
        match value {
            Value::Null => {
                0u8.hash(hasher);
                4
            }
            Value::Bool(b) => {
                (1u8, b).hash(hasher);
                5
            }
            Value::Number(n) => {
                let text = n.to_string();
                (2u8, &text).hash(hasher);
                text.len()
            }
            Value::String(s) => {
                (3u8, s).hash(hasher);
                s.len() + 2
            }
            Value::Array(items) => {
                (4u8, items.len()).hash(hasher);
                2 + items.iter().map(|item| feed(item, hasher) + 1).sum::<usize>()
            }
            Value::Object(map) => {
                (5u8, map.len()).hash(hasher);
                let mut bytes = 2;
                for (key, item) in map {
                    key.hash(hasher);
                    bytes += key.len() + 4 + feed(item, hasher);
                }
                bytes
            }
        }
    }
    let mut hasher = DefaultHasher::new();
    let bytes = feed(value, &mut hasher);
    (hasher.finish(), bytes)
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

    #[test]
    fn the_caches_keep_at_most_their_bytes_and_a_text_over_the_bound_is_used_not_kept() {
        let cache = SchemaCache::with_max_bytes(4096, 64 << 10);
        let tools = |n: usize, pad: usize| {
            format!(
                r#"[{{"name": "t{n}", "input_schema": {{"type": "object", "description": "{}"}}}}]"#,
                "d".repeat(pad)
            )
        };
        for n in 0..40 {
            assert!(cache.catalog_for_text(tools(n, 10 << 10).as_bytes()).is_some());
            assert!(cache.kept_bytes() <= 2 * (64 << 10), "{n}: {}", cache.kept_bytes());
        }
        let before = cache.kept_bytes();
        let huge = tools(99, 100 << 10);
        let catalog = cache.catalog_for_text(huge.as_bytes()).expect("still built for its request");
        assert!(matches!(catalog.get("t99"), Some(Ok(_))));
        assert_eq!(cache.kept_bytes(), before, "a text over the bound is not kept");
        let again = cache.catalog_for_text(huge.as_bytes()).unwrap();
        assert!(!Arc::ptr_eq(&catalog, &again), "built again, not cached");
        let small = tools(1, 10);
        let first = cache.catalog_for_text(small.as_bytes()).unwrap();
        assert!(Arc::ptr_eq(&first, &cache.catalog_for_text(small.as_bytes()).unwrap()), "small texts still cached");
    }
}
