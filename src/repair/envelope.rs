//! A call envelope: an object that is a whole tool call (which tool, and its input) rather than
//! the input. Models write it in the spellings of the APIs and formats they were taught:
//!
//! - flat: `{"name": …, "arguments": {…}}`, with `parameters` or `input` for `arguments`,
//!   optionally `type: "function"` or `"tool_use"` and a call id (`id`, `call_id`): the Hermes,
//!   Mistral and Messages API (`tool_use` block) forms;
//! - nested: `{"type": "function", "function": {"name": …, "arguments": …}}` (OpenAI's), with or
//!   without `type` and an id;
//! - `{"tool": …, "args": {…}}`, `{"tool_name": …, "tool_input": {…}}` (the hook payload's),
//!   `{"recipient_name": "functions.X", "parameters": {…}}` (OpenAI's parallel call item);
//! - `{"type": "function_call", "call_id": …, "name": …, "arguments": "…", "status": …}` (an
//!   OpenAI Responses item) and `{"tool_calls": [one call]}` (a chat message holding one).
//!
//! Each is recognised whole: any other key, or two names or inputs, and it is not an envelope.

use serde_json::{Map, Value};

/// Keys that name the called tool.
const NAME_KEYS: [&str; 4] = ["name", "tool", "tool_name", "recipient_name"];
/// Keys that hold the call's input.
const INPUT_KEYS: [&str; 5] = ["parameters", "arguments", "input", "args", "tool_input"];
/// Keys a call object carries beside them: its type and its id.
const CALL_KEYS: [&str; 3] = ["type", "id", "call_id"];
/// The keys of an OpenAI Responses `function_call` item beside its name and arguments.
const RESPONSES_ITEM_KEYS: [&str; 4] = ["type", "id", "call_id", "status"];

/// The call inside an envelope.
pub struct Envelope<'v> {
    /// The tool it names.
    pub name: &'v str,
    /// The top-level keys that carry the name and the input (`name` and `arguments`, or
    /// `function`): where the schema declares them all, they may be its own members.
    pub carriers: Vec<&'v str>,
    /// Every top-level key of the object.
    pub keys: Vec<&'v str>,
    pub input: Value,
    /// Whether the input was a string holding it as JSON (`"arguments": "{…}"`), read here.
    pub decoded: bool,
}

/// The envelope `value` is, if it is one.
pub fn envelope(value: &Value) -> Option<Envelope<'_>> {
    let map = value.as_object()?;
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    if let Some(function) = map.get("function") {
        // OpenAI's nested call: the name and input one level down, the type and id beside it.
        let others_known = keys.iter().all(|k| *k == "function" || CALL_KEYS.contains(k));
        let inner = flat(function.as_object()?, &[])?;
        return (others_known && typed(map, "function")).then(|| Envelope {
            carriers: vec!["function"],
            keys,
            ..inner
        });
    }
    if let Some(calls) = map.get("tool_calls") {
        // An OpenAI assistant message holding one call; with two, neither is this block's one.
        let [call] = calls.as_array()?.as_slice() else { return None };
        return (keys.len() == 1).then(|| envelope(call)).flatten().map(|inner| Envelope {
            carriers: vec!["tool_calls"],
            keys,
            ..inner
        });
    }
    // An OpenAI Responses `function_call` item carries its `status` too.
    let responses_item = map.get("type").is_some_and(|t| t == "function_call");
    let extra: &[&str] = if responses_item { &RESPONSES_ITEM_KEYS } else { &CALL_KEYS };
    let call = flat(map, extra)?;
    let also = match call.carriers[0] {
        "name" if responses_item => "function_call",
        "name" => "tool_use",
        _ => "function",
    };
    typed(map, also).then_some(call)
}

/// The keys carrying a call (one name and one input object) in an object that is not an
/// envelope only because of other keys beside them (`{"name": "Bash", "arguments": {…},
/// "command": "x"}`): the call's input, or the object as written, are two readings.
pub fn call_beside_keys(value: &Value) -> Option<[&str; 2]> {
    let map = value.as_object()?;
    if envelope(value).is_some() {
        return None;
    }
    let one = |candidates: &[&str]| {
        let mut found = map.keys().filter(|k| candidates.contains(&k.as_str()));
        match (found.next(), found.next()) {
            (Some(key), None) => Some(key.as_str()),
            _ => None,
        }
    };
    let (name, input) = (one(&NAME_KEYS)?, one(&INPUT_KEYS)?);
    (map[name].is_string() && input_object(&map[input]).is_some()).then_some([name, input])
}

/// One name and one input, and besides them only `extra` keys: the call, carried by those two.
fn flat<'v>(map: &'v Map<String, Value>, extra: &[&str]) -> Option<Envelope<'v>> {
    let one = |candidates: &[&str]| {
        let mut found = map.iter().filter(|(k, _)| candidates.contains(&k.as_str()));
        match (found.next(), found.next()) {
            (Some(pair), None) => Some(pair),
            // Two given: two names or inputs for one call, either of which may be the one meant.
            _ => None,
        }
    };
    let (name_key, name) = one(&NAME_KEYS)?;
    let (input_key, input) = one(&INPUT_KEYS)?;
    if !map.keys().all(|k| k == name_key || k == input_key || extra.contains(&k.as_str())) {
        return None;
    }
    let name = name.as_str()?;
    // OpenAI's recipient is `functions.<name>`.
    let name = match name_key.as_str() {
        "recipient_name" => name.strip_prefix("functions.").unwrap_or(name),
        _ => name,
    };
    Some(Envelope {
        name,
        carriers: vec![name_key.as_str(), input_key.as_str()],
        keys: map.keys().map(String::as_str).collect(),
        input: input_object(input)?,
        decoded: input.is_string(),
    })
}

/// `type`, where given, is a call's: `function`, or `tool_use` (a Messages API block, flat only).
fn typed(map: &Map<String, Value>, also: &str) -> bool {
    map.get("type").is_none_or(|t| t == "function" || t == also)
}

/// An input: an object, or a string holding one as JSON (OpenAI's `"arguments": "{…}"`).
fn input_object(inner: &Value) -> Option<Value> {
    match inner {
        Value::Object(_) => Some(inner.clone()),
        // Only what serde_json reads, with no key given twice (it would keep the last).
        Value::String(text) if !super::json5_reading::has_duplicate_keys(text) => {
            let parsed = serde_json::from_str::<Value>(text).ok().or_else(|| {
                // `"arguments": "{\"content\": \"a\nb\"}"`: escaped once, for the outer string
                // only, a line break reaches the inner one raw — it can mean only itself.
                serde_json::from_str::<Value>(&controls_escaped_in_strings(text)?).ok()
            });
            parsed.filter(Value::is_object)
        }
        _ => None,
    }
}

/// `text` with the raw tabs and line breaks inside its JSON strings escaped; `None` when there
/// are none (or a string never closes).
fn controls_escaped_in_strings(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '\n' | '\r' | '\t' if in_string => {
                out.push_str(match c {
                    '\n' => "\\n",
                    '\r' => "\\r",
                    _ => "\\t",
                });
                changed = true;
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    (changed && !in_string).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_line_breaks_in_an_arguments_strings_strings_are_escaped() {
        assert_eq!(controls_escaped_in_strings("{\"a\": \"x\ny\"}").as_deref(), Some("{\"a\": \"x\\ny\"}"));
        assert_eq!(controls_escaped_in_strings("{\n\"a\": \"x\"\n}"), None);
        assert_eq!(controls_escaped_in_strings("{\"a\": \"x\\\"\ty\"}").as_deref(), Some("{\"a\": \"x\\\"\\ty\"}"));
        assert_eq!(controls_escaped_in_strings("{\"a\": \"x\ny"), None);
    }

    #[test]
    fn every_spelling_of_a_call_is_an_envelope() {
        for value in [
            json!({"name": "t", "arguments": {"a": 1}}),
            json!({"name": "t", "arguments": "{\"a\": 1}", "type": "function"}),
            json!({"name": "t", "arguments": {"a": 1}, "id": "call_0"}),
            json!({"name": "t", "parameters": {"a": 1}, "type": "function", "call_id": "c1"}),
            json!({"type": "tool_use", "id": "toolu_01", "name": "t", "input": {"a": 1}}),
            json!({"type": "function", "function": {"name": "t", "arguments": "{\"a\": 1}"}}),
            json!({"function": {"name": "t", "arguments": {"a": 1}}, "id": "x"}),
            json!({"tool": "t", "args": {"a": 1}}),
            json!({"tool_name": "t", "tool_input": {"a": 1}}),
            json!({"recipient_name": "functions.t", "parameters": {"a": 1}}),
            json!({"recipient_name": "t", "parameters": {"a": 1}}),
            json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "t", "arguments": "{\"a\": 1}", "status": "completed"}),
            json!({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{\"a\": 1}"}}]}),
            json!({"tool_calls": [{"name": "t", "arguments": {"a": 1}}]}),
        ] {
            let call = envelope(&value).unwrap_or_else(|| panic!("{value}"));
            assert_eq!((call.name, call.input), ("t", json!({"a": 1})), "{value}");
        }
    }

    #[test]
    fn objects_that_are_not_whole_calls_are_not_envelopes() {
        for value in [
            json!({"name": "t", "arguments": {}, "input": {}}),
            json!({"name": "t", "tool": "u", "args": {}}),
            json!({"name": "t", "arguments": {}, "force": true}),
            json!({"name": "t", "arguments": {}, "type": "object"}),
            json!({"name": "t", "arguments": []}),
            json!({"type": "function", "function": {"name": "t", "arguments": {}, "strict": true}}),
            json!({"function": {"name": "t", "arguments": {}}, "extra": 1}),
            json!({"tool": "t", "args": {}, "type": "tool_use"}),
            json!({"name": "t", "arguments": {}, "status": "completed"}),
            json!({"type": "function", "name": "t", "arguments": {}, "status": "completed"}),
            json!({"tool_calls": [{"name": "t", "arguments": {}}, {"name": "t", "arguments": {}}]}),
            json!({"tool_calls": [{"name": "t", "arguments": {}}], "role": "assistant"}),
            json!({"tool_calls": []}),
        ] {
            assert!(envelope(&value).is_none(), "{value}");
        }
    }

    #[test]
    fn a_call_beside_other_keys_is_seen() {
        let beside = json!({"name": "t", "arguments": {"a": 1}, "force": true});
        assert_eq!(call_beside_keys(&beside), Some(["name", "arguments"]));
        for value in [
            json!({"name": "t", "arguments": {"a": 1}}),
            json!({"name": "t", "command": "x"}),
            json!({"name": "t", "arguments": [], "x": 1}),
            json!({"name": 1, "arguments": {}, "x": 1}),
        ] {
            assert!(call_beside_keys(&value).is_none(), "{value}");
        }
    }
}
