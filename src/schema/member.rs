//! One top-level member of a JSON object, found without building anything: strings are skipped
//! with `memchr` and nested values by counting brackets, so a 450 KB request is crossed in
//! tens of microseconds. Only the member's own text is checked further (by its reader); the
//! rest is not validated, which is fine for a body the upstream reads again anyway.

use memchr::memchr;

/// The raw text of the top-level member `name` of the object in `body`; `None` when `body` is
/// not an object, the member is absent or appears twice, a top-level key is escaped, or the
/// object's framing breaks.
pub fn top_level_member<'a>(body: &'a [u8], name: &str) -> Option<&'a str> {
    let mut i = skip_whitespace(body, 0);
    if body.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_whitespace(body, i + 1);
    if body.get(i) == Some(&b'}') {
        return None;
    }
    let mut found = None;
    loop {
        if body.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(body, i)?;
        let key = &body[i + 1..key_end - 1];
        // An escaped key (`"t\u006fols"`) may spell the member for the upstream's parser:
        // rather than decode it, give up, as for a member given twice.
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_whitespace(body, key_end);
        if body.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_whitespace(body, i + 1);
        let end = value_end(body, start)?;
        if key == name.as_bytes() {
            if found.is_some() {
                return None;
            }
            found = Some(start..end);
        }
        i = skip_whitespace(body, end);
        match body.get(i) {
            Some(b',') => i = skip_whitespace(body, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    std::str::from_utf8(&body[found?]).ok()
}

fn skip_whitespace(body: &[u8], mut i: usize) -> usize {
    while matches!(body.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The index just past the string that opens at `body[start]`. Only quotes are searched for
/// (file contents are full of `\n` escapes): a quote after an odd run of backslashes is
/// escaped. Each run is walked once, so this stays linear.
fn string_end(body: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        let at = i + memchr(b'"', body.get(i..)?)?;
        let backslashes = body[start + 1..at].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(at + 1);
        }
        i = at + 1;
    }
}

/// The index just past the value that starts at `body[start]`.
fn value_end(body: &[u8], start: usize) -> Option<usize> {
    match body.get(start)? {
        b'"' => string_end(body, start),
        b'{' | b'[' => {
            let (mut depth, mut i) = (0usize, start);
            while let Some(&byte) = body.get(i) {
                match byte {
                    b'"' => i = string_end(body, i)?,
                    b'{' | b'[' => {
                        depth += 1;
                        i += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        i += 1;
                        if depth == 0 {
                            return Some(i);
                        }
                    }
                    _ => i += 1,
                }
            }
            None
        }
        _ => {
            let length =
                body[start..].iter().position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'));
            length.filter(|&n| n > 0).map(|n| start + n)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::value::RawValue;

    /// What serde_json reads as the member, for comparison.
    fn by_serde(body: &str) -> Option<String> {
        #[derive(Deserialize)]
        struct Only<'a> {
            #[serde(borrow)]
            tools: Option<&'a RawValue>,
        }
        let value: serde_json::Value = serde_json::from_str(body).ok()?;
        value.as_object()?;
        Some(serde_json::from_str::<Only>(body).ok()?.tools?.get().to_string())
    }

    /// Bodies whose `tools` serde_json reads: the incremental scanner is checked on them too.
    pub(crate) const VALID_BODIES: [&str; 7] = [
        r#"{"tools": [1, 2]}"#,
        r#"  {"a": "x\"y\\", "tools" : [{"n": "]}\"{["}] , "b": [[{}]]}  "#,
        r#"{"messages": [{"content": [{"tools": "no"}]}], "tools": [], "stream": true}"#,
        r#"{"x": -1.5e3, "y": null, "z": false, "tools": {"not": "an array"}}"#,
        "{\"s\": \"\\u00e9 \u{1f600}\",\n\t\"tools\":\n[\"\\\\\"]\n}",
        r#"{"a": 1}"#,
        r#"{}"#,
    ];

    /// Bodies with no member to find: broken framing, or `tools` given twice.
    pub(crate) const BROKEN_BODIES: [&str; 13] = [
        "",
        "[]",
        "not json",
        r#"{"tools": [1, 2]"#,
        r#"{"tools": "open"#,
        r#"{"tools" [1]}"#,
        r#"{"a": 1 "tools": [1]}"#,
        r#"{"tools": [1], "tools": [2]}"#,
        r#"{"tools": }"#,
        r#"{"tools": [1]]}"#,
        r#"{tools: [1]}"#,
        // An escaped key may be `tools` to the upstream (round 7 Q1), whichever comes first.
        r#"{"tools": [1], "t\u006fols": [2]}"#,
        r#"{"a\"b": 1, "tools": [1]}"#,
    ];

    #[test]
    fn finds_what_serde_json_finds_on_valid_bodies() {
        for body in VALID_BODIES {
            assert_eq!(top_level_member(body.as_bytes(), "tools").map(String::from), by_serde(body), "{body}");
        }
    }

    #[test]
    fn broken_framing_or_a_repeated_member_gives_nothing() {
        for body in BROKEN_BODIES {
            assert_eq!(top_level_member(body.as_bytes(), "tools"), None, "{body}");
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(serde_json::Value::from),
            "[\\\\\"{}\\[\\],:a-z\u{e9}\u{1f600} \n]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("[a-z\\\\\"]{0,6}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// On any valid body, the member found is the one serde_json reads, byte for byte.
        #[test]
        fn agrees_with_serde_json(before in json_value(), tools in json_value(), after in json_value(), pretty: bool) {
            let body = serde_json::json!({"before": before, "tools": tools, "after": after});
            let text = if pretty { serde_json::to_string_pretty(&body).unwrap() } else { body.to_string() };
            // serde reads a `null` member as absent.
            let found = top_level_member(text.as_bytes(), "tools").filter(|t| *t != "null");
            proptest::prop_assert_eq!(found.map(String::from), by_serde(&text));
        }
    }
}
