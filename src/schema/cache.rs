//! Compiled schemas cached by content, so a tool list repeated on every request of a
//! conversation is compiled once.

use super::{SchemaError, ToolSchema};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Bounded cache from a schema's canonical text to its compiled form.
pub struct SchemaCache {
    capacity: usize,
    entries: Mutex<HashMap<String, Arc<ToolSchema>>>,
}

impl SchemaCache {
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), entries: Mutex::new(HashMap::new()) }
    }

    /// The compiled schema, compiling it on first sight.
    pub fn get_or_compile(&self, schema: &Value) -> Result<Arc<ToolSchema>, SchemaError> {
        let key = schema.to_string();
        if let Some(found) = self.lock().get(&key) {
            return Ok(found.clone());
        }
        let compiled = Arc::new(ToolSchema::compile(schema)?);
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            // Tool sets change rarely; dropping everything keeps memory bounded without LRU
            // bookkeeping on the hot path.
            entries.clear();
        }
        entries.insert(key, compiled.clone());
        Ok(compiled)
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<ToolSchema>>> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
