//! Rung 2: the standard JSON5 dialect, read so that it never decides anything JSON5 leaves
//! open: a key given twice refuses the reading (JSON5 would keep the last), and a number whose
//! text the value would not keep (`0xFF`, `1e3` through a float) leaves the reading out.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};
use std::fmt;

/// The object `raw` holds in JSON5, if it holds one with no key given twice and every number
/// spelled as JSON spells it.
pub fn read(raw: &str) -> Option<Value> {
    let value = json5::from_str::<Strict>(raw).ok()?.0;
    (value.is_object() && numbers_keep_their_text(&value, raw)).then_some(value)
}

/// Whether JSON `text` gives some key twice in one object (serde_json would keep the last).
pub fn has_duplicate_keys(text: &str) -> bool {
    let twice = |text: &str| serde_json::from_str::<Strict>(text).is_err_and(|e| e.to_string().contains("given twice"));
    // An unpaired surrogate stops serde_json before it sees the keys after it.
    twice(text) || super::without_lone_surrogates(text).is_some_and(|text| twice(&text))
}

/// `text` with the escapes only JSON5 reads spelled so that they keep their backslash, if it
/// has any: a backslash before a line break (JSON5 drops both: a line continuation) and `\'` in
/// a `"` string (JSON5 drops the backslash). Models copy such text from shell scripts, Makefiles
/// and Python, where the backslash is meant: this is the literal reading beside JSON5's.
pub fn with_literal_escapes(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let (mut quote, mut changed) = (None, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            (Some(open), '\\') => match chars.next() {
                Some('\n') => {
                    out.push_str("\\\\\\n");
                    changed = true;
                    continue;
                }
                Some('\r') => {
                    let crlf = chars.next_if_eq(&'\n').is_some();
                    out.push_str(if crlf { "\\\\\\r\\n" } else { "\\\\\\r" });
                    changed = true;
                    continue;
                }
                Some(separator @ ('\u{2028}' | '\u{2029}')) => {
                    out.push_str("\\\\");
                    out.push(separator);
                    changed = true;
                    continue;
                }
                Some('\'') if open == '"' => {
                    out.push_str("\\\\'");
                    changed = true;
                    continue;
                }
                Some(escaped) => {
                    out.push('\\');
                    out.push(escaped);
                    continue;
                }
                None => {}
            },
            _ => {}
        }
        out.push(c);
    }
    changed.then_some(out)
}

/// Where a string of JSON5 text holds an escape JSON lacks that JSON5 reads as another
/// character (`\v` a vertical tab, `\0` a NUL, `\x41` an `A`); comments are not strings.
pub fn escape_json_lacks(raw: &str) -> Option<usize> {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => {
                let mut found = None;
                i = string_end(bytes, i, |at| {
                    if found.is_none() && matches!(bytes.get(at + 1), Some(b'v' | b'0' | b'x')) {
                        found = Some(at);
                    }
                });
                if found.is_some() {
                    return found;
                }
            }
            b'/' => i = after_comment(raw, i),
            _ => i += 1,
        }
    }
    None
}

/// Where the string opened by the quote at `open` ends (past its closing quote), calling
/// `escape` with each backslash's offset on the way (the escaped character is stepped over).
fn string_end(bytes: &[u8], open: usize, mut escape: impl FnMut(usize)) -> usize {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() && bytes[i] != quote {
        if bytes[i] == b'\\' {
            escape(i);
            i += 2;
        } else {
            i += 1;
        }
    }
    i + 1
}

/// Where the comment at `i` ends (past its `*/` or before its line break), or `i + 1` when no
/// comment starts there.
fn after_comment(raw: &str, i: usize) -> usize {
    match raw.as_bytes().get(i + 1) {
        Some(b'/') => raw[i..].find('\n').map_or(raw.len(), |n| i + n),
        Some(b'*') => raw[i + 2..].find("*/").map_or(raw.len(), |n| i + 2 + n + 2),
        _ => i + 1,
    }
}

/// A JSON value that refuses duplicate keys.
struct Strict(Value);

impl<'de> de::Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON5 value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some((key, Strict(value))) = map.next_entry::<String, Strict>()? {
            // One lookup and no copy of the key: this runs for every member of every reading.
            match members.entry(key) {
                Entry::Occupied(given) => return Err(de::Error::custom(format!("key '{}' given twice", given.key()))),
                Entry::Vacant(free) => {
                    free.insert(value);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

/// Whether the numbers in `value` are the number tokens of `raw`, each as written (so none was
/// re-spelled: `0xFF`, `+5`, `5.0000000000000001` are not). Compared as sorted lists: objects
/// need not keep the order of their members.
fn numbers_keep_their_text(value: &Value, raw: &str) -> bool {
    let mut read = Vec::new();
    collect_numbers(value, &mut read);
    let mut written = number_tokens(raw);
    read.sort();
    written.sort();
    read == written
}

fn collect_numbers(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|v| collect_numbers(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_numbers(v, out)),
        _ => {}
    }
}

/// The number-like tokens of JSON5 text outside its strings and comments.
fn number_tokens(raw: &str) -> Vec<String> {
    let bytes = raw.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'\'' => i = string_end(bytes, i, |_| {}),
            b'/' if matches!(bytes.get(i + 1), Some(b'/' | b'*')) => i = after_comment(raw, i),
            byte if (byte.is_ascii_digit() || matches!(byte, b'-' | b'+' | b'.'))
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'$'))) =>
            {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'.' | b'+' | b'-')) {
                    i += 1;
                }
                let token = &raw[start..i];
                if token.bytes().any(|b| b.is_ascii_digit()) {
                    tokens.push(token.to_string());
                }
            }
            _ => i += 1,
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_and_respelled_numbers_leave_the_reading_out() {
        assert_eq!(read("{a: 1, b: 'x',}"), Some(serde_json::json!({"a": 1, "b": "x"})));
        assert_eq!(read("{command: 'ls',\u{c}command: 'rm -rf ~'}"), None);
        assert_eq!(read("{timeout: 0xFF}"), None);
        assert_eq!(read("{ratio: .5}"), None);
        assert_eq!(read("[1]"), None);
        // A re-spelled number is caught where its new spelling occurs elsewhere too.
        assert_eq!(read("{command: 'ls', timeout: 0xFF, description: 'exit 255'}"), None);
        assert_eq!(read("{command: 'sleep 5.0',\u{b}timeout: 5.0000000000000001}"), None);
        assert_eq!(read("{a: -1.5, b: [2, 3]}").map(|v| v["b"][1].clone()), Some(serde_json::json!(3)));
        assert!(has_duplicate_keys(r#"{"a": {"b": 1, "b": 2}}"#));
        assert!(!has_duplicate_keys(r#"{"a": 1, "b": [{"a": 2}]}"#));
    }

    #[test]
    fn escapes_json_lacks_in_strings_not_comments() {
        assert_eq!(escape_json_lacks(r#"{"content": "x\vy",}"#), Some(14));
        assert_eq!(escape_json_lacks(r#"{a: 'x\0', b: "\x41"}"#), Some(6));
        assert_eq!(escape_json_lacks(r#"{a: "D:\\videos", b: "\n\t\'"}"#), None);
        assert_eq!(escape_json_lacks("{a: 1, // C:\\videos\n b: 'x' /* \\x41 */}"), None);
    }

    #[test]
    fn the_literal_reading_keeps_the_backslashes_only_json5_drops() {
        assert_eq!(with_literal_escapes("['a\\\nb']").as_deref(), Some("['a\\\\\\nb']"));
        assert_eq!(with_literal_escapes("[\"it\\'s\"]").as_deref(), Some("[\"it\\\\'s\"]"));
        // JSON's own escapes and `\'` in a `'` string stay.
        assert_eq!(with_literal_escapes("['it\\'s', \"a\\n\\\"\"]"), None);
        assert_eq!(with_literal_escapes("{a: 1}"), None);
    }
}
