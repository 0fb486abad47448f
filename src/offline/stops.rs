//! The stop reason of the message holding a transcript's tool call. The CLI writes one
//! assistant line per content block, each with the message's `id` and `stop_reason`; a line may
//! carry `null` where a later line of the same message has the reason.

use serde_json::Value;
use std::collections::HashMap;

/// A line's own `message.stop_reason`.
pub fn own(line: &Value) -> Option<&str> {
    line["message"]["stop_reason"].as_str()
}

/// The lines that make up one message: the same `message.id` from the same request (its
/// `requestRef`) of the same session. An id alone is not enough: a gateway or a fake API may
/// give every message the same one.
type MessageKey = (Option<String>, Option<String>, String);

fn message_key(line: &Value) -> Option<MessageKey> {
    let text = |value: &Value| value.as_str().map(String::from);
    Some((text(&line["sessionId"]), text(&line["requestRef"]), line["message"]["id"].as_str()?.to_string()))
}

/// Every assistant line's stop reason, by message and by tool_use id.
#[derive(Debug, Default, Clone)]
pub struct MessageStops {
    /// The last stop reason recorded for each message.
    by_message: HashMap<MessageKey, String>,
    /// Each tool_use block's message and the stop reason on its own line.
    by_tool_use: HashMap<String, (Option<MessageKey>, Option<String>)>,
}

impl MessageStops {
    pub fn add(&mut self, line: &Value) {
        if line["type"] != "assistant" {
            return;
        }
        let message = message_key(line);
        let reason = own(line);
        if let (Some(message), Some(reason)) = (&message, reason) {
            self.by_message.insert(message.clone(), reason.to_string());
        }
        for block in line["message"]["content"].as_array().into_iter().flatten() {
            if let (Some("tool_use"), Some(id)) = (block["type"].as_str(), block["id"].as_str()) {
                self.by_tool_use.insert(id.to_string(), (message.clone(), reason.map(String::from)));
            }
        }
    }

    /// The stop reason of the message `line` belongs to: its own, else its message's last.
    pub fn of_line(&self, line: &Value) -> Option<String> {
        own(line).or_else(|| self.by_message.get(&message_key(line)?).map(String::as_str)).map(String::from)
    }

    /// The stop reason of the message holding tool_use `id`.
    pub fn of_tool_use(&self, id: &str) -> Option<String> {
        let (message, reason) = self.by_tool_use.get(id)?;
        reason.as_deref().or_else(|| self.by_message.get(message.as_ref()?).map(String::as_str)).map(String::from)
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
        let mut stops = MessageStops::default();
        for line in text.lines() {
            stops.add(&serde_json::from_str(line).unwrap());
        }
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

    /// Attack round 9 W1: a fake API (or a gateway) gives every message the same id; a call
    /// whose message recorded no stop reason took the reason of another request's message.
    #[test]
    fn a_stop_reason_is_borrowed_only_within_its_own_request_and_session() {
        let line = |session: &str, request: &str, reason: Option<&str>, tool_use: &str| {
            let mut value: Value = serde_json::from_str(&assistant("msg_x", reason, tool_use)).unwrap();
            value["sessionId"] = session.into();
            value["requestRef"] = request.into();
            value
        };
        let mut stops = MessageStops::default();
        for value in [
            line("s1", "req_1", None, "toolu_a"),
            line("s1", "req_2", Some("end_turn"), "toolu_b"),
            line("s2", "req_1", Some("tool_use"), "toolu_c"),
            line("s1", "req_3", None, "toolu_d"),
            line("s1", "req_3", Some("max_tokens"), "toolu_e"),
        ] {
            stops.add(&value);
        }
        assert_eq!(stops.of_tool_use("toolu_a"), None);
        assert_eq!(stops.of_tool_use("toolu_d").as_deref(), Some("max_tokens"));
    }
}
