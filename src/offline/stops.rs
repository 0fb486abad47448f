//! The stop reason of the message holding a transcript's tool call. The CLI writes one
//! assistant line per content block, each with the message's `id` and `stop_reason`; a line may
//! carry `null` where a later line of the same message has the reason.

use serde_json::Value;
use std::collections::HashMap;

/// A line's own `message.stop_reason`.
pub fn own(line: &Value) -> Option<&str> {
    line["message"]["stop_reason"].as_str()
}

/// Every assistant line's stop reason, by message id and by tool_use id.
#[derive(Debug, Default, Clone)]
pub struct MessageStops {
    /// The last stop reason recorded for each message id.
    by_message: HashMap<String, String>,
    /// Each tool_use block's message id and the stop reason on its own line.
    by_tool_use: HashMap<String, (Option<String>, Option<String>)>,
}

impl MessageStops {
    pub fn of_text(text: &str) -> Self {
        let mut stops = Self::default();
        for line in text.lines() {
            if let Ok(value) = serde_json::from_str::<Value>(line) {
                stops.add(&value);
            }
        }
        stops
    }

    pub fn add(&mut self, line: &Value) {
        if line["type"] != "assistant" {
            return;
        }
        let message = line["message"]["id"].as_str();
        let reason = own(line);
        if let (Some(message), Some(reason)) = (message, reason) {
            self.by_message.insert(message.to_string(), reason.to_string());
        }
        for block in line["message"]["content"].as_array().into_iter().flatten() {
            if let (Some("tool_use"), Some(id)) = (block["type"].as_str(), block["id"].as_str()) {
                self.by_tool_use.insert(id.to_string(), (message.map(String::from), reason.map(String::from)));
            }
        }
    }

    /// The stop reason of the message `line` belongs to: its own, else its message's last.
    pub fn of_line<'a>(&'a self, line: &'a Value) -> Option<&'a str> {
        own(line).or_else(|| self.by_message.get(line["message"]["id"].as_str()?).map(String::as_str))
    }

    /// The stop reason of the message holding tool_use `id`.
    pub fn of_tool_use(&self, id: &str) -> Option<&str> {
        let (message, reason) = self.by_tool_use.get(id)?;
        reason.as_deref().or_else(|| self.by_message.get(message.as_deref()?).map(String::as_str))
    }
}

/// A whole transcript's stop reasons, read only when a line carries none of its own (the
/// CLI of today writes the reason on every line: nothing is read twice then).
pub struct TranscriptStops<'t> {
    text: &'t str,
    index: Option<MessageStops>,
}

impl<'t> TranscriptStops<'t> {
    pub fn new(text: &'t str) -> Self {
        Self { text, index: None }
    }

    pub fn of_line(&mut self, line: &Value) -> Option<String> {
        if let Some(reason) = own(line) {
            return Some(reason.to_string());
        }
        self.index().of_line(line).map(String::from)
    }

    pub fn of_tool_use(&mut self, id: &str) -> Option<String> {
        self.index().of_tool_use(id).map(String::from)
    }

    fn index(&mut self) -> &MessageStops {
        let text = self.text;
        self.index.get_or_insert_with(|| MessageStops::of_text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn assistant(message: &str, stop_reason: Option<&str>, tool_use: &str) -> String {
        json!({"type": "assistant", "message": {"id": message, "stop_reason": stop_reason,
            "content": [{"type": "tool_use", "id": tool_use, "name": "Bash", "input": {}}]}})
        .to_string()
    }

    #[test]
    fn a_null_stop_reason_is_the_last_one_its_message_records() {
        let text = [
            assistant("msg_1", None, "toolu_a"),
            assistant("msg_1", Some("end_turn"), "toolu_b"),
            assistant("msg_1", Some("max_tokens"), "toolu_c"),
            assistant("msg_2", None, "toolu_d"),
            assistant("msg_3", Some("tool_use"), "toolu_e"),
        ]
        .join("\n");
        let mut stops = TranscriptStops::new(&text);
        let table = [
            ("toolu_a", Some("max_tokens")),
            ("toolu_b", Some("end_turn")),
            ("toolu_c", Some("max_tokens")),
            ("toolu_d", None),
            ("toolu_e", Some("tool_use")),
            ("toolu_unknown", None),
        ];
        for (id, expected) in table {
            assert_eq!(stops.of_tool_use(id).as_deref(), expected, "{id}");
        }
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(stops.of_line(&first).as_deref(), Some("max_tokens"));
    }
}
