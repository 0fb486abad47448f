//! The Anthropic Messages wire format, as the stream repair reads and writes it: event names,
//! the fields it needs (read borrowed, nothing else built), the re-issued delta and the ping.
//! A second wire format is a second file like this one.

use super::sse::Frame;
use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;

/// The wire formats whose streams are repaired: one today, each with a file like this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireFormat {
    /// Anthropic Messages: `POST …/v1/messages`, answered with the SSE events read here.
    AnthropicMessages,
}

impl WireFormat {
    /// The format of a request from its method and path; `None` for one passed through unread.
    pub fn of_request(method: &str, path: &str) -> Option<Self> {
        (method == "POST" && path.ends_with("/v1/messages")).then_some(Self::AnthropicMessages)
    }
}

/// The event carrying text, thinking and tool input pieces: read only while input is held.
pub const DELTA_EVENT: &str = "content_block_delta";

/// The events a client dispatches by their name and then reads by their data's `type`: a frame
/// whose name and `type` disagree means one thing to one reader and another to the next.
const MESSAGES_EVENTS: [&str; 8] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    DELTA_EVENT,
    "content_block_stop",
    "ping",
    "error",
];

/// What one frame means to the repair.
#[derive(Debug, PartialEq)]
pub enum Event<'a> {
    Ping,
    /// A frame with neither an event name nor data (comments only): no client dispatches it.
    Comment,
    /// A content block opens; `tool` is set for a tool call.
    BlockStart {
        index: u64,
        tool: Option<ToolUse<'a>>,
    },
    /// A piece of a tool call's input.
    InputDelta {
        index: u64,
        partial_json: Cow<'a, str>,
    },
    /// Any other delta (text, thinking, signature, a future kind).
    OtherDelta {
        index: u64,
    },
    BlockStop {
        index: u64,
    },
    /// The message begins, holding `blocks` content blocks already (`None`: its content
    /// cannot be counted). Clients number the blocks that follow after these.
    MessageStart {
        blocks: Option<usize>,
    },
    /// The message's stop reason.
    MessageDelta {
        stop_reason: Option<Cow<'a, str>>,
    },
    /// The message ends (`message_stop`).
    MessageStop,
    /// The stream breaks (`error`).
    End,
    /// Not a Messages event this repair reads: it passes through.
    Other,
    /// A frame whose meaning is not certain: data that cannot be read (JSON that serde_json
    /// rejects, such as a surrogate pair split over two deltas), a frame that is not UTF-8, an
    /// event whose data names another event's `type`. Nothing may overtake the frames held
    /// before it, and nothing held is repaired across it.
    Unreadable,
}

#[derive(Debug, PartialEq)]
pub struct ToolUse<'a> {
    pub id: Cow<'a, str>,
    pub name: Cow<'a, str>,
}

/// Reads a frame's event and the fields the repair needs. The data's `type` must be the
/// event's name: the SDKs pass a frame on by its name and then read it by its `type`.
pub fn read<'a>(frame: &'a Frame<'a>) -> Event<'a> {
    if frame.not_utf8 {
        return Event::Unreadable;
    }
    let data = frame.data.as_deref();
    let Some(name) = frame.event else {
        return match data {
            None => Event::Comment,
            Some(data) => foreign(data),
        };
    };
    let data = data.unwrap_or("");
    let event = match name {
        "ping" => return typed_as(data, name, Event::Ping),
        "error" => return typed_as(data, name, Event::End),
        // Clients skip a `message_stop` whose data is not typed so (attack round 14, R3).
        "message_stop" => {
            return match type_of(data) {
                DataType::Named(kind) if kind == name => Event::MessageStop,
                _ => Event::Unreadable,
            }
        }
        "message_start" => serde_json::from_str(data).map(|start: MessageStart| {
            (start.kind == name).then_some(Event::MessageStart { blocks: start.message.content.map(|c| c.len()) })
        }),
        "content_block_start" => serde_json::from_str(data).map(|start: BlockStart| {
            (start.kind == name).then(|| Event::BlockStart {
                index: start.index,
                tool: (start.content_block.kind == "tool_use")
                    .then_some(ToolUse { id: start.content_block.id, name: start.content_block.name }),
            })
        }),
        DELTA_EVENT => serde_json::from_str(data).map(|delta: BlockDelta| {
            (delta.kind == name).then(|| match delta.delta {
                Delta { kind, partial_json: Some(partial_json) } if kind == "input_json_delta" => {
                    Event::InputDelta { index: delta.index, partial_json }
                }
                Delta { kind, .. } if kind == "input_json_delta" => Event::Unreadable,
                _ => Event::OtherDelta { index: delta.index },
            })
        }),
        "content_block_stop" => serde_json::from_str(data)
            .map(|stop: BlockStop| (stop.kind == name).then_some(Event::BlockStop { index: stop.index })),
        "message_delta" => serde_json::from_str(data).map(|delta: MessageDelta| {
            (delta.kind == name).then_some(Event::MessageDelta { stop_reason: delta.delta.stop_reason })
        }),
        _ => return foreign(data),
    };
    event.ok().flatten().unwrap_or(Event::Unreadable)
}

/// `event` for a frame whose data is not read, unless its data names another event's `type`.
fn typed_as<'a>(data: &str, name: &str, event: Event<'a>) -> Event<'a> {
    match type_of(data) {
        DataType::Named(kind) if kind != name => Event::Unreadable,
        DataType::Unknowable => Event::Unreadable,
        _ => event,
    }
}

/// A frame under a name this repair does not know (or none): passed through, unless its data
/// is typed as a Messages event, which some clients read by that `type`.
fn foreign(data: &str) -> Event<'static> {
    match type_of(data) {
        DataType::Named(kind) if MESSAGES_EVENTS.contains(&kind.as_str()) => Event::Unreadable,
        DataType::Unknowable => Event::Unreadable,
        _ => Event::Other,
    }
}

/// What a frame's data says its `type` is, as the clients read it.
enum DataType {
    /// No data, data that is no object, or an object without a string `type`.
    None,
    Named(String),
    /// Data serde_json cannot read, where a client's parser may still find a `type` (a lone
    /// surrogate in a string, which JavaScript and Python accept).
    Unknowable,
}

/// The data's `type` with the last of repeated keys winning, as in JavaScript's and Python's
/// parsers (a derived struct rejects the repeat, and a frame typed twice hid a block start
/// from the repair while the SDK read it: attack round 14, F3).
fn type_of(data: &str) -> DataType {
    if data.trim().is_empty() {
        return DataType::None;
    }
    match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(map)) => match map.get("type") {
            Some(Value::String(kind)) => DataType::Named(kind.clone()),
            _ => DataType::None,
        },
        Ok(_) => DataType::None,
        Err(error) if error.is_syntax() || error.is_eof() => match data.trim_start().starts_with(['{', '[']) {
            true => DataType::Unknowable,
            false => DataType::None,
        },
        Err(_) => DataType::Unknowable,
    }
}

#[derive(Deserialize)]
struct MessageStart {
    #[serde(rename = "type")]
    kind: String,
    message: MessageSnapshot,
}

#[derive(Deserialize)]
struct MessageSnapshot {
    /// The blocks the message holds already: a missing list holds none.
    #[serde(default = "no_blocks")]
    content: Option<Vec<serde::de::IgnoredAny>>,
}

fn no_blocks() -> Option<Vec<serde::de::IgnoredAny>> {
    Some(Vec::new())
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// Required: a frame without it names no block (the CLI fails the stream on it).
    index: u64,
    #[serde(borrow)]
    content_block: ContentBlock<'a>,
}

#[derive(Deserialize)]
struct ContentBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    id: Cow<'a, str>,
    #[serde(default, borrow)]
    name: Cow<'a, str>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// Required: a frame without it names no block (the CLI fails the stream on it).
    index: u64,
    #[serde(borrow)]
    delta: Delta<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    partial_json: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct BlockStop<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// Required: a frame without it names no block (the CLI fails the stream on it).
    index: u64,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    delta: StopReason<'a>,
}

#[derive(Deserialize)]
struct StopReason<'a> {
    #[serde(default, borrow)]
    stop_reason: Option<Cow<'a, str>>,
}

/// The re-issued call: one delta holding the whole repaired input.
pub fn repaired_delta(index: u64, input: &Value) -> Vec<u8> {
    let data = json!({
        "type": DELTA_EVENT,
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": input.to_string()},
    });
    format!("event: {DELTA_EVENT}\ndata: {data}\n\n").into_bytes()
}

/// A keep-alive frame for long holds.
pub fn ping_frame() -> &'static [u8] {
    b"event: ping\ndata: {\"type\": \"ping\"}\n\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::parse_frame;

    fn event_of(raw: &str) -> String {
        format!("{:?}", read(&parse_frame(raw.as_bytes())))
    }

    #[test]
    fn only_messages_requests_are_in_the_format() {
        assert_eq!(WireFormat::of_request("POST", "/gateway/v1/messages"), Some(WireFormat::AnthropicMessages));
        for (method, path) in [("GET", "/v1/messages"), ("POST", "/v1/messages/count_tokens"), ("HEAD", "/api/hello")] {
            assert_eq!(WireFormat::of_request(method, path), None, "{method} {path}");
        }
    }

    #[test]
    fn events_are_read_from_their_fields_and_unreadable_ones_are_named() {
        for (raw, expected) in [
            (
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n",
                "BlockStart { index: 1, tool: Some(ToolUse { id: \"t\", name: \"n\" }) }",
            ),
            (
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
                "BlockStart { index: 0, tool: None }",
            ),
            (
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}\n\n",
                "InputDelta { index: 1, partial_json: \"{\\\"a\\\"\" }",
            ),
            (
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n",
                "OtherDelta { index: 0 }",
            ),
            (
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\ud83d\"}}\n\n",
                "Unreadable",
            ),
            (
                "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\"}}\n\n",
                "Unreadable",
            ),
            ("event: content_block_stop\ndata: {\"index\":\n\n", "Unreadable"),
            ("event: content_block_stop\rdata: {\"type\":\"content_block_stop\",\"index\":2}\r\r", "BlockStop { index: 2 }"),
            (
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{}}\n\n",
                "MessageDelta { stop_reason: Some(\"tool_use\") }",
            ),
            ("event: ping\ndata: {\"type\": \"ping\"}\n\n", "Ping"),
            ("event: ping\ndata: {}\n\n", "Ping"),
            ("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", "MessageStop"),
            // Data no parser here can read may still be typed for a client's parser.
            ("event: future_event\ndata: {\n\n", "Unreadable"),
            ("event: future_event\ndata: not json\n\n", "Other"),
            ("event: future_event\ndata: {\"type\":\"future_event\"}\n\n", "Other"),
            (": a comment\n\n", "Comment"),
            ("data: {\"type\":\"text\"}\n\n", "Other"),
        ] {
            assert_eq!(event_of(raw), expected, "{raw}");
        }
    }

    #[test]
    fn a_repeated_type_is_read_as_the_clients_read_it_the_last_one() {
        // Attack round 14, F3: a derived struct rejected the repeat and the frame passed as
        // foreign, while the SDK read it as a block start.
        for (raw, expected) in [
            ("event: x\ndata: {\"type\":\"ping\",\"type\":\"content_block_start\",\"index\":0}\n\n", "Unreadable"),
            ("data: {\"type\":\"content_block_start\",\"type\":\"x\"}\n\n", "Other"),
            (
                "event: message_start\ndata: {\"type\":\"message_start\",\"type\":\"content_block_start\"}\n\n",
                "Unreadable",
            ),
            ("event: ping\ndata: {\"type\":\"ping\",\"type\":\"message_delta\"}\n\n", "Unreadable"),
            ("event: x\ndata: {\"type\":\"content_block_start\",\"s\":\"\\ud800\"}\n\n", "Unreadable"),
        ] {
            assert_eq!(event_of(raw), expected, "{raw}");
        }
    }

    #[test]
    fn a_message_start_counts_the_blocks_it_holds() {
        for (content, expected) in [
            ("\"content\":[]", "MessageStart { blocks: Some(0) }"),
            ("\"content\":[{\"type\":\"text\",\"text\":\"a\"},{}]", "MessageStart { blocks: Some(2) }"),
            ("\"id\":\"m\"", "MessageStart { blocks: Some(0) }"),
            ("\"content\":null", "MessageStart { blocks: None }"),
            ("\"content\":\"x\"", "Unreadable"),
        ] {
            let raw =
                format!("event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{{content}}}}}\n\n");
            assert_eq!(event_of(&raw), expected, "{raw}");
        }
    }

    #[test]
    fn a_block_frame_without_a_numeric_index_is_unreadable() {
        // Read as index 0, an index-less frame was taken into block 0's input, or a repaired
        // block re-sent as block 0 (attack round 12-S, findings c30, c31).
        for raw in [
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\"0\",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\"}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":-1}\n\n",
        ] {
            assert_eq!(event_of(raw), "Unreadable", "{raw}");
        }
    }

    #[test]
    fn a_frame_whose_name_and_type_disagree_is_unreadable() {
        let delta = r#"{"type":"TYPE","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}"#;
        for (name, kind) in [
            ("content_block_delta", "ping"),
            ("content_block_delta", "content_block_stop"),
            ("content_block_stop", "content_block_delta"),
            ("message_delta", "ping"),
            ("ping", "content_block_delta"),
            ("message_start", "content_block_delta"),
            ("message_stop", "content_block_delta"),
            ("content_block_delta_v2", "content_block_delta"),
        ] {
            let raw = format!("event: {name}\ndata: {}\n\n", delta.replace("TYPE", kind));
            assert_eq!(event_of(&raw), "Unreadable", "{raw}");
        }
        let untyped = "event: content_block_delta\ndata: {\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x\"}}\n\n";
        assert_eq!(event_of(untyped), "Unreadable", "a delta with no type is read by no client");
        let unnamed = format!("data: {}\n\n", delta.replace("TYPE", "content_block_delta"));
        assert_eq!(event_of(&unnamed), "Unreadable");
        let spoofed = "event: message_delta\ndata: {\"type\":\"ping\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n";
        assert_eq!(event_of(spoofed), "Unreadable", "a stop reason only from a message_delta");
        assert_eq!(
            format!("{:?}", read(&parse_frame(b"event: content_block_delta\n: \xff\ndata: {}\n\n"))),
            "Unreadable"
        );
    }
}
