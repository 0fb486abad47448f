//! The stream repair: a pure state machine over a Messages API SSE response, bytes in and bytes
//! out. Only a `tool_use` block's `input_json_delta` frames are held. At the block's end a valid
//! input goes out unchanged; an invalid one waits for the stop reason, then goes out either as
//! one repaired delta (the re-issued call) or exactly as it came (refused). Frames that arrive
//! while a block is held (pings) keep their place, and everything that follows an unresolved
//! block waits behind it: no frame is reordered. The proxy adds its own keep-alive pings during
//! long holds.

mod sse;

pub use sse::{parse_frame, Frame, FrameSplitter};

use crate::repair::{is_valid_for_cli, parse_as_cli, repair, Outcome, Refusal, RefusalCode, RepairOptions, Status};
use crate::schema::ToolCatalog;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Held input bytes per block past which the block passes through unrepaired.
    pub max_held_bytes: usize,
    pub repair: RepairOptions,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self { max_held_bytes: 1 << 20, repair: RepairOptions::default() }
    }
}

/// What was decided about one tool call in the stream.
#[derive(Debug, Clone)]
pub struct Decision {
    pub index: u64,
    pub tool: String,
    pub tool_use_id: String,
    pub raw: String,
    pub stop_reason: Option<String>,
    pub outcome: Outcome,
}

/// The output of one step: bytes for the client and the decisions made.
#[derive(Debug, Default)]
pub struct Step {
    pub bytes: Vec<u8>,
    pub decisions: Vec<Decision>,
}

struct HeldBlock {
    index: u64,
    id: String,
    name: String,
    /// Every frame held for this block, in arrival order.
    frames: Vec<u8>,
    /// The held frames that are not input deltas (pings): they still go out with a repair.
    extras: Vec<u8>,
    input: String,
}

enum Segment {
    Bytes(Vec<u8>),
    /// A block whose input did not parse, with its `content_block_stop` frame.
    Awaiting(HeldBlock, Vec<u8>),
}

pub struct StreamRepairer {
    splitter: FrameSplitter,
    tools: Arc<ToolCatalog>,
    options: StreamOptions,
    holding: BTreeMap<u64, HeldBlock>,
    /// Output queued behind an unresolved block; empty when nothing waits.
    waiting: Vec<Segment>,
}

impl StreamRepairer {
    pub fn new(tools: Arc<ToolCatalog>, options: StreamOptions) -> Self {
        Self { splitter: FrameSplitter::default(), tools, options, holding: BTreeMap::new(), waiting: Vec::new() }
    }

    /// Whether tool input is being held back (the proxy keeps the client alive meanwhile).
    pub fn is_holding(&self) -> bool {
        !self.holding.is_empty() || !self.waiting.is_empty()
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Step {
        let mut frames = Vec::new();
        self.splitter.push(chunk, &mut frames);
        let mut step = Step::default();
        for frame in frames {
            self.frame(frame, &mut step);
        }
        step
    }

    /// The end of the upstream stream: everything held goes out unchanged.
    pub fn finish(&mut self) -> Step {
        let mut step = Step::default();
        self.flush_unchanged(&mut step, "the stream ended inside the tool block");
        let rest = self.splitter.take_rest();
        step.bytes.extend_from_slice(&rest);
        step
    }

    fn emit(&mut self, bytes: &[u8], step: &mut Step) {
        match self.waiting.last_mut() {
            None => step.bytes.extend_from_slice(bytes),
            Some(Segment::Bytes(queued)) => queued.extend_from_slice(bytes),
            Some(Segment::Awaiting(..)) => self.waiting.push(Segment::Bytes(bytes.to_vec())),
        }
    }

    fn frame(&mut self, raw: Vec<u8>, step: &mut Step) {
        let frame = parse_frame(&raw);
        let event = frame.event.map(str::to_owned);
        let data = || frame.data.as_deref().and_then(|d| serde_json::from_str::<Value>(d).ok()).unwrap_or_default();
        match event.as_deref() {
            Some("ping") => match self.holding.values_mut().next_back() {
                Some(block) => {
                    block.frames.extend_from_slice(&raw);
                    block.extras.extend_from_slice(&raw);
                }
                None => self.emit(&raw, step),
            },
            Some("content_block_start") => {
                let data = data();
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let index = data["index"].as_u64().unwrap_or(0);
                    self.holding.insert(
                        index,
                        HeldBlock {
                            index,
                            id: block["id"].as_str().unwrap_or_default().to_string(),
                            name: block["name"].as_str().unwrap_or_default().to_string(),
                            frames: Vec::new(),
                            extras: Vec::new(),
                            input: String::new(),
                        },
                    );
                }
                self.emit(&raw, step);
            }
            Some("content_block_delta") if !self.holding.is_empty() => {
                let data = data();
                let index = data["index"].as_u64().unwrap_or(0);
                match (self.holding.get_mut(&index), data["delta"]["type"].as_str()) {
                    (Some(block), Some("input_json_delta")) => {
                        block.frames.extend_from_slice(&raw);
                        block.input.push_str(data["delta"]["partial_json"].as_str().unwrap_or_default());
                        if block.frames.len() > self.options.max_held_bytes {
                            let block = self.holding.remove(&index).expect("held block");
                            let refusal = Refusal::new(
                                RefusalCode::TooLarge,
                                format!("tool input over the {} byte hold limit", self.options.max_held_bytes),
                                None,
                            );
                            self.release_unchanged(block, Vec::new(), refusal, None, step);
                        }
                    }
                    _ => self.emit(&raw, step),
                }
            }
            Some("content_block_stop") => {
                let index = data()["index"].as_u64().unwrap_or(0);
                let Some(block) = self.holding.remove(&index) else {
                    return self.emit(&raw, step);
                };
                if is_valid_for_cli(&block.input) && self.fits_schema(&block) {
                    self.emit(&block.frames, step);
                    self.emit(&raw, step);
                    step.decisions.push(decision(block, None, Outcome::valid_unread()));
                } else {
                    // Not JSON, or JSON that breaks the schema: it waits for the stop reason, then
                    // is repaired (a lossless coercion) or goes out as it came (refused, invalid).
                    self.waiting.push(Segment::Awaiting(block, raw));
                }
            }
            Some("message_delta") => {
                let stop_reason = data()["delta"]["stop_reason"].as_str().map(String::from);
                // Blocks never stopped were cut (`max_tokens`): they go out as they came.
                let cut: Vec<u64> = self.holding.keys().copied().collect();
                for index in cut {
                    let block = self.holding.remove(&index).expect("held block");
                    let refusal = Refusal::new(RefusalCode::Truncated, "the tool block never ended", None);
                    self.release_unchanged(block, Vec::new(), refusal, stop_reason.clone(), step);
                }
                self.resolve(stop_reason, step);
                self.emit(&raw, step);
            }
            Some("error" | "message_stop") => {
                self.flush_unchanged(step, "the stream ended before the stop reason");
                self.emit(&raw, step);
            }
            _ => self.emit(&raw, step),
        }
    }

    /// Whether a block whose input parses fits its tool's schema (no schema: nothing to break).
    fn fits_schema(&self, block: &HeldBlock) -> bool {
        match self.tools.get(&block.name) {
            Some(Ok(schema)) => {
                parse_as_cli(&block.input).is_some_and(|value| schema.first_violation(&value).is_none())
            }
            _ => true,
        }
    }

    /// With the stop reason known, every waiting block is repaired or released unchanged.
    fn resolve(&mut self, stop_reason: Option<String>, step: &mut Step) {
        let options = RepairOptions { stop_reason: stop_reason.clone(), ..self.options.repair.clone() };
        for segment in std::mem::take(&mut self.waiting) {
            match segment {
                Segment::Bytes(bytes) => step.bytes.extend_from_slice(&bytes),
                Segment::Awaiting(block, stop_frame) => {
                    let options = RepairOptions { tool: Some(block.name.clone()), ..options.clone() };
                    let outcome = match self.tools.get(&block.name) {
                        Some(Ok(schema)) => repair(&block.input, Some(schema), &options),
                        Some(Err(error)) => {
                            Outcome::refused(Refusal::new(RefusalCode::UnusableSchema, error.to_string(), None))
                        }
                        None => Outcome::refused(Refusal::new(
                            RefusalCode::UnusableSchema,
                            format!("the request declares no schema for tool '{}'", block.name),
                            None,
                        )),
                    };
                    match &outcome.input {
                        Some(input) if outcome.status == Status::Repaired => {
                            step.bytes.extend_from_slice(&block.extras);
                            step.bytes.extend_from_slice(&repaired_delta(block.index, input));
                        }
                        _ => step.bytes.extend_from_slice(&block.frames),
                    }
                    step.bytes.extend_from_slice(&stop_frame);
                    step.decisions.push(decision(block, stop_reason.clone(), outcome));
                }
            }
        }
    }

    /// Everything held goes out exactly as it came, in order.
    fn flush_unchanged(&mut self, step: &mut Step, why: &str) {
        for segment in std::mem::take(&mut self.waiting) {
            match segment {
                Segment::Bytes(bytes) => step.bytes.extend_from_slice(&bytes),
                Segment::Awaiting(block, stop_frame) => {
                    let refusal = Refusal::new(RefusalCode::Truncated, why, None);
                    self.release_unchanged(block, stop_frame, refusal, None, step);
                }
            }
        }
        for block in std::mem::take(&mut self.holding).into_values() {
            let refusal = Refusal::new(RefusalCode::Truncated, why, None);
            self.release_unchanged(block, Vec::new(), refusal, None, step);
        }
    }

    fn release_unchanged(
        &mut self,
        block: HeldBlock,
        stop_frame: Vec<u8>,
        refusal: Refusal,
        stop_reason: Option<String>,
        step: &mut Step,
    ) {
        self.emit(&block.frames, step);
        self.emit(&stop_frame, step);
        step.decisions.push(decision(block, stop_reason, Outcome::refused(refusal)));
    }
}

fn decision(block: HeldBlock, stop_reason: Option<String>, outcome: Outcome) -> Decision {
    Decision { index: block.index, tool: block.name, tool_use_id: block.id, raw: block.input, stop_reason, outcome }
}

/// The re-issued call: one delta holding the whole repaired input.
fn repaired_delta(index: u64, input: &Value) -> Vec<u8> {
    let data = json!({
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": input.to_string()},
    });
    format!("event: content_block_delta\ndata: {data}\n\n").into_bytes()
}

/// A keep-alive frame for long holds.
pub fn ping_frame() -> &'static [u8] {
    b"event: ping\ndata: {\"type\": \"ping\"}\n\n"
}
