//! The `tools` entries of one Messages API request, each parsed, and a rewrite that replaces
//! some of them: only the replaced entries' bytes change, everything else stays as the client
//! sent it. Strict injection and examples injection both plan their changes as a [`Rewrite`].

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::hash::{DefaultHasher, Hash, Hasher};

#[derive(Deserialize)]
struct ToolsOnly<'a> {
    #[serde(borrow)]
    tools: Option<Vec<&'a RawValue>>,
}

/// What every rewrite needs to know of every entry, read without building the entry's value.
#[derive(Deserialize, Default)]
struct Head<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    strict: Option<bool>,
    input_schema: Option<IgnoredAny>,
}

impl Head<'_> {
    fn of(entry: &Value) -> Self {
        Self {
            name: entry["name"].as_str().map(|n| Cow::Owned(n.to_string())),
            strict: entry["strict"].as_bool(),
            input_schema: entry.get("input_schema").map(|_| IgnoredAny),
        }
    }
}

/// A request's tool entries: where each sits in the body, and its current value (the client's,
/// or a replacement applied by an earlier rewrite). An entry's value is built only when a
/// rewrite asks for it: most entries are never looked at beyond their name.
pub struct RequestTools<'a> {
    body: &'a str,
    raw: Vec<&'a RawValue>,
    heads: Vec<Head<'a>>,
    entries: Vec<OnceCell<Value>>,
    replaced: Vec<bool>,
}

impl<'a> RequestTools<'a> {
    /// `None` for a body that is not JSON or has no `tools` array.
    pub fn parse(body: &'a [u8]) -> Option<Self> {
        let body = std::str::from_utf8(body).ok()?;
        let raw = serde_json::from_str::<ToolsOnly>(body).ok()?.tools?;
        // An entry whose head does not read (say, a non-boolean `strict`) has no name: no
        // rewrite touches it.
        let heads = raw.iter().map(|r| serde_json::from_str(r.get()).unwrap_or_default()).collect();
        let entries = raw.iter().map(|_| OnceCell::new()).collect();
        let replaced = vec![false; raw.len()];
        Some(Self { body, raw, heads, entries, replaced })
    }

    pub fn len(&self) -> usize {
        self.raw.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    pub fn name(&self, index: usize) -> Option<&str> {
        self.heads[index].name.as_deref()
    }

    /// Whether the entry carries `strict: true`.
    pub fn is_strict(&self, index: usize) -> bool {
        self.heads[index].strict == Some(true)
    }

    pub fn has_schema(&self, index: usize) -> bool {
        self.heads[index].input_schema.is_some()
    }

    /// The entry's value, built on first use.
    pub fn entry(&self, index: usize) -> &Value {
        self.entries[index].get_or_init(|| serde_json::from_str(self.raw[index].get()).unwrap_or_default())
    }

    pub fn apply(&mut self, rewrite: &Rewrite) {
        for (index, entry) in &rewrite.replacements {
            self.heads[*index] = Head::of(entry);
            self.entries[*index] = OnceCell::from(entry.clone());
            self.replaced[*index] = true;
        }
    }

    pub fn is_rewritten(&self) -> bool {
        self.replaced.contains(&true)
    }

    /// The body with each replaced entry spliced over its own bytes.
    pub fn body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 256);
        let mut cursor = 0;
        for (index, raw) in self.raw.iter().enumerate().filter(|(i, _)| self.replaced[*i]) {
            let start = raw.get().as_ptr() as usize - self.body.as_ptr() as usize;
            out.extend_from_slice(&self.body.as_bytes()[cursor..start]);
            out.extend_from_slice(self.entry(index).to_string().as_bytes());
            cursor = start + raw.get().len();
        }
        out.extend_from_slice(&self.body.as_bytes()[cursor..]);
        out
    }
}

/// Replacement tool entries by index, and a key that identifies them (to remember a set the
/// API rejected, and to report a set once).
#[derive(Debug, Clone, PartialEq)]
pub struct Rewrite {
    pub replacements: Vec<(usize, Value)>,
    pub key: u64,
}

impl Rewrite {
    /// `feature` keeps the keys of different rewrites of the same entries apart.
    pub fn new(feature: &str, replacements: Vec<(usize, Value)>) -> Self {
        let mut hasher = DefaultHasher::new();
        feature.hash(&mut hasher);
        for (index, entry) in &replacements {
            index.hash(&mut hasher);
            entry.to_string().hash(&mut hasher);
        }
        Self { replacements, key: hasher.finish() }
    }

    pub fn is_empty(&self) -> bool {
        self.replacements.is_empty()
    }

    /// A key for reporting a plan once: its replacements and what it left out.
    pub fn report_key(&self, left_out: &impl Hash) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.key.hash(&mut hasher);
        left_out.hash(&mut hasher);
        hasher.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_replaced_entries_change_and_every_other_byte_stays() {
        let body = br#"{"model":"m",  "tools":[ {"name":"a"} ,{"name" : "b"}], "x":"  y "}"#;
        let mut tools = RequestTools::parse(body).unwrap();
        assert!(!tools.is_rewritten());
        assert_eq!(tools.body(), body);
        assert!(!tools.is_strict(1) && tools.name(1) == Some("b"));
        tools.apply(&Rewrite::new("t", vec![(1, json!({"name": "b", "strict": true}))]));
        assert!(tools.is_rewritten());
        assert!(tools.is_strict(1), "the head follows the replacement");
        assert_eq!(tools.entry(1)["strict"], true);
        assert_eq!(
            String::from_utf8(tools.body()).unwrap(),
            r#"{"model":"m",  "tools":[ {"name":"a"} ,{"name":"b","strict":true}], "x":"  y "}"#
        );
    }

    #[test]
    fn keys_differ_by_feature_and_content() {
        let one = |feature, name| Rewrite::new(feature, vec![(0, json!({"name": name}))]).key;
        assert_eq!(one("strict", "a"), one("strict", "a"));
        assert_ne!(one("strict", "a"), one("examples", "a"));
        assert_ne!(one("strict", "a"), one("strict", "b"));
        let empty = Rewrite::new("strict", vec![]);
        assert_ne!(empty.report_key(&["x"]), empty.report_key(&["y"]), "what was left out tells plans apart");
    }

    #[test]
    fn heads_read_names_with_escapes_and_an_unreadable_head_has_no_name() {
        let body = br#"{"tools":[{"name":"a\u0062","input_schema":{}},{"name":"c","strict":"yes"},{"strict":true}]}"#;
        let tools = RequestTools::parse(body).unwrap();
        assert_eq!((tools.len(), tools.name(0), tools.has_schema(0)), (3, Some("ab"), true));
        assert_eq!((tools.name(1), tools.is_strict(1)), (None, false));
        assert_eq!((tools.name(2), tools.is_strict(2), tools.has_schema(2)), (None, true, false));
        assert_eq!(tools.entry(1)["strict"], "yes");
    }

    #[test]
    fn bodies_without_a_tools_array_have_nothing_to_rewrite() {
        assert!(RequestTools::parse(b"{\"model\":\"m\"}").is_none());
        assert!(RequestTools::parse(b"not json").is_none());
    }
}
