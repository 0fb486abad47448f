//! Messages API streams for the fake upstream, in the API's exact framing.

use serde_json::{json, Value};

fn frame(event: &str, data: Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn message_start() -> String {
    frame(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message", "role": "assistant",
            "model": "claude-fake", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )
}

fn message_end(stop_reason: &str) -> String {
    frame(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": 20}}),
    ) + &frame("message_stop", json!({"type": "message_stop"}))
}

fn text_block(index: u64, text: &str) -> String {
    let mut out = frame(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    );
    out += &frame(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
    );
    out + &frame("content_block_stop", json!({"type": "content_block_stop", "index": index}))
}

/// A whole assistant message of text.
pub fn text_message(text: &str) -> String {
    message_start() + &text_block(0, text) + &message_end("end_turn")
}

/// A whole assistant message: some text, then one tool call whose input streams as `raw`
/// in deltas of `piece` bytes (split on character boundaries).
pub fn tool_message(tool_use_id: &str, tool: &str, raw: &str, piece: usize) -> String {
    let mut out = message_start() + &text_block(0, "Calling the tool.");
    out += &frame(
        "content_block_start",
        json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": tool_use_id, "name": tool, "input": {}}}),
    );
    let mut rest = raw;
    while !rest.is_empty() {
        let mut cut = piece.min(rest.len()).max(1);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (chunk, tail) = rest.split_at(cut);
        out += &frame(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": chunk}}),
        );
        rest = tail;
    }
    out += &frame("content_block_stop", json!({"type": "content_block_stop", "index": 1}));
    out + &message_end("tool_use")
}
