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

/// What one frame means to the repair.
#[derive(Debug, PartialEq)]
pub enum Event<'a> {
    Ping,
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
    /// The message's stop reason.
    MessageDelta {
        stop_reason: Option<Cow<'a, str>>,
    },
    /// The stream ends (`message_stop`) or breaks (`error`).
    End,
    /// Not a Messages event this repair reads: it passes through.
    Other,
    /// A Messages event whose data cannot be read (JSON that serde_json rejects, such as a
    /// surrogate pair split over two deltas). Nothing may overtake the frames held before it.
    Unreadable,
}

#[derive(Debug, PartialEq)]
pub struct ToolUse<'a> {
    pub id: Cow<'a, str>,
    pub name: Cow<'a, str>,
}

/// Reads a frame's event and the fields the repair needs.
pub fn read<'a>(frame: &'a Frame<'a>) -> Event<'a> {
    let data = frame.data.as_deref().unwrap_or("");
    let event = match frame.event {
        Some("ping") => return Event::Ping,
        Some("error" | "message_stop") => return Event::End,
        Some("content_block_start") => serde_json::from_str(data).map(|start: BlockStart| Event::BlockStart {
            index: start.index,
            tool: (start.content_block.kind == "tool_use")
                .then_some(ToolUse { id: start.content_block.id, name: start.content_block.name }),
        }),
        Some(DELTA_EVENT) => serde_json::from_str(data).map(|delta: BlockDelta| match delta.delta {
            Delta { kind, partial_json: Some(partial_json) } if kind == "input_json_delta" => {
                Event::InputDelta { index: delta.index, partial_json }
            }
            Delta { kind, .. } if kind == "input_json_delta" => Event::Unreadable,
            _ => Event::OtherDelta { index: delta.index },
        }),
        Some("content_block_stop") => {
            serde_json::from_str(data).map(|stop: BlockStop| Event::BlockStop { index: stop.index })
        }
        Some("message_delta") => serde_json::from_str(data)
            .map(|delta: MessageDelta| Event::MessageDelta { stop_reason: delta.delta.stop_reason }),
        _ => return Event::Other,
    };
    event.unwrap_or(Event::Unreadable)
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    #[serde(default)]
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
    #[serde(default)]
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
struct BlockStop {
    #[serde(default)]
    index: u64,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
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
                "event: content_block_start\ndata: {\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n",
                "BlockStart { index: 1, tool: Some(ToolUse { id: \"t\", name: \"n\" }) }",
            ),
            (
                "event: content_block_start\ndata: {\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
                "BlockStart { index: 0, tool: None }",
            ),
            (
                "event: content_block_delta\ndata: {\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}\n\n",
                "InputDelta { index: 1, partial_json: \"{\\\"a\\\"\" }",
            ),
            ("event: content_block_delta\ndata: {\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n", "OtherDelta { index: 0 }"),
            (
                "event: content_block_delta\ndata: {\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\ud83d\"}}\n\n",
                "Unreadable",
            ),
            ("event: content_block_delta\ndata: {\"index\":1,\"delta\":{\"type\":\"input_json_delta\"}}\n\n", "Unreadable"),
            ("event: content_block_stop\ndata: {\"index\":\n\n", "Unreadable"),
            ("event: content_block_stop\rdata: {\"index\":2}\r\r", "BlockStop { index: 2 }"),
            (
                "event: message_delta\ndata: {\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{}}\n\n",
                "MessageDelta { stop_reason: Some(\"tool_use\") }",
            ),
            ("event: ping\ndata: {}\n\n", "Ping"),
            ("event: message_stop\ndata: {}\n\n", "End"),
            ("event: future_event\ndata: {\n\n", "Other"),
        ] {
            assert_eq!(event_of(raw), expected, "{raw}");
        }
    }
}
