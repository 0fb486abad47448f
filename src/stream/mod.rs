//! The stream repair: a pure state machine over a Messages API SSE response, bytes in and bytes
//! out. Only a `tool_use` block's `input_json_delta` frames are held. At the block's end a valid
//! input goes out unchanged; an invalid one waits for the stop reason, then goes out either as
//! one repaired delta (the re-issued call) or exactly as it came (refused). Frames that arrive
//! while a block is held (pings) keep their place, and everything that follows an unresolved
//! block waits behind it: no frame is reordered. A frame that cannot be read while input is held
//! releases the held frames unchanged before it. The proxy adds its own keep-alive pings during
//! long holds. The wire format's names and fields live in [`messages`].

pub mod messages;
mod sse;

pub use messages::ping_frame;
pub use sse::{parse_frame, Frame, FrameSplitter};

use crate::repair::{is_valid_for_cli, parse_as_cli, repair, Outcome, Refusal, RefusalCode, RepairOptions, Status};
use crate::schema::ToolCatalog;
use bytes::Bytes;
use messages::{repaired_delta, Event};
use std::collections::{BTreeMap, BTreeSet, HashSet};
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

/// The output of one step: chunks for the client, in order, and the decisions made. A frame
/// that passes unchanged is the same bytes that came in.
#[derive(Debug, Default)]
pub struct Step {
    pub chunks: Vec<Bytes>,
    pub decisions: Vec<Decision>,
}

struct HeldBlock {
    index: u64,
    id: String,
    name: String,
    /// Every frame held for this block, in arrival order.
    frames: Vec<Bytes>,
    /// Bytes held, for the hold limit.
    held_bytes: usize,
    /// The held frames that are not input deltas (pings): they still go out with a repair.
    extras: Vec<Bytes>,
    input: String,
}

enum Segment {
    Chunks(Vec<Bytes>),
    /// A block whose input did not parse, with its `content_block_stop` frame.
    Awaiting(HeldBlock, Bytes),
}

pub struct StreamRepairer {
    splitter: FrameSplitter,
    tools: Arc<ToolCatalog>,
    options: StreamOptions,
    holding: BTreeMap<u64, HeldBlock>,
    /// Blocks past the hold limit, passing through: only their input text is kept.
    passing: BTreeMap<u64, HeldBlock>,
    /// Output queued behind an unresolved block; empty when nothing waits.
    waiting: Vec<Segment>,
    /// Bytes in `waiting`, bounded by the hold limit.
    waiting_bytes: usize,
    /// A frame outgrew the hold limit: the rest of the stream passes through unread.
    unread: bool,
    /// The index the next block must have, as clients number blocks (by position: the
    /// message's own blocks, then one per `content_block_start`); `None` before the first.
    next_index: Option<u64>,
    /// The blocks are not numbered as clients number them, or a second message began: no
    /// index can be trusted to name the block a client updates, so nothing more is held.
    misnumbered: bool,
    /// The stop reason of the message's `message_delta`, once one came; `Err` when two came
    /// that differ (clients keep the last).
    stop_reason: Option<Result<String, ()>>,
    /// Blocks started and not yet stopped, by index.
    open_blocks: BTreeSet<u64>,
    /// `message_stop` came: what waits is decided when the stream ends.
    after_message_stop: bool,
}

impl StreamRepairer {
    pub fn new(tools: Arc<ToolCatalog>, options: StreamOptions) -> Self {
        Self {
            splitter: FrameSplitter::default(),
            tools,
            options,
            holding: BTreeMap::new(),
            passing: BTreeMap::new(),
            waiting: Vec::new(),
            waiting_bytes: 0,
            unread: false,
            next_index: None,
            misnumbered: false,
            stop_reason: None,
            open_blocks: BTreeSet::new(),
            after_message_stop: false,
        }
    }

    /// Whether tool input is being held back (the proxy keeps the client alive meanwhile).
    pub fn is_holding(&self) -> bool {
        !self.holding.is_empty() || !self.waiting.is_empty()
    }

    /// Bytes held back: what a repair at the next frame may have to read.
    pub fn held_bytes(&self) -> usize {
        self.holding.values().map(|block| block.held_bytes).sum::<usize>() + self.waiting_bytes
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Step {
        let mut step = Step::default();
        if self.unread {
            step.chunks.push(Bytes::copy_from_slice(chunk));
            return step;
        }
        let mut frames = Vec::new();
        self.splitter.push(chunk, &mut frames);
        for frame in frames {
            self.frame(frame, &mut step);
            if self.waiting_bytes > self.options.max_held_bytes {
                // What waits for the stop reason (a block and the frames behind it) is bounded
                // too: past the limit it goes out as it came.
                self.flush_unchanged(
                    &mut step,
                    RefusalCode::TooLarge,
                    "over the hold limit while waiting for the stop reason",
                );
            }
        }
        if self.splitter.buffered() > self.options.max_held_bytes {
            // A frame that does not end within the hold limit is not read: what was held goes
            // out as it came, then the frame so far, then the rest of the stream as it comes.
            self.flush_unchanged(&mut step, RefusalCode::TooLarge, "a frame over the hold limit");
            step.chunks.push(self.splitter.take_rest());
            self.unread = true;
        }
        step
    }

    /// The end of the upstream stream: everything held goes out unchanged.
    pub fn finish(&mut self) -> Step {
        let mut step = Step::default();
        let mut frames = Vec::new();
        self.splitter.finish(&mut frames);
        for frame in frames {
            self.frame(frame, &mut step);
        }
        match (self.after_message_stop, self.stop_reason.clone()) {
            (true, Some(Ok(stop_reason))) => self.resolve(stop_reason, &mut step),
            (true, Some(Err(()))) => self.flush_unchanged(
                &mut step,
                RefusalCode::Truncated,
                "message_delta frames with different stop reasons: the tool input may have been cut",
            ),
            (true, None) => {
                self.flush_unchanged(&mut step, RefusalCode::Truncated, "the stream ended before the stop reason")
            }
            (false, _) => {
                self.flush_unchanged(&mut step, RefusalCode::Truncated, "the stream ended inside the tool block")
            }
        }
        let rest = self.splitter.take_rest();
        if !rest.is_empty() {
            step.chunks.push(rest);
        }
        step
    }

    fn emit(&mut self, bytes: Bytes, step: &mut Step) {
        if !self.waiting.is_empty() {
            self.waiting_bytes += bytes.len();
        }
        match self.waiting.last_mut() {
            None => step.chunks.push(bytes),
            Some(Segment::Chunks(queued)) => queued.push(bytes),
            Some(Segment::Awaiting(..)) => self.waiting.push(Segment::Chunks(vec![bytes])),
        }
    }

    fn frame(&mut self, raw: Bytes, step: &mut Step) {
        if self.misnumbered {
            return self.emit(raw, step);
        }
        if self.after_message_stop {
            // Clients go on reading frames after `message_stop` until the body ends: what
            // waits is decided at that end, and a frame that may mean something releases it.
            if !matches!(messages::read(&parse_frame(&raw)), Event::Ping | Event::Comment) {
                self.stop_repairing(step, "a frame after message_stop");
            }
            return self.emit(raw, step);
        }
        // Every frame is read, text deltas too: clients act on a frame's data, whatever its
        // name says (a block start sent as a `content_block_delta`: attack round 14, R1).
        let frame = parse_frame(&raw);
        let event = messages::read(&frame);
        if !self.in_an_open_block(&event) {
            // A delta or stop for a block not open: a client applies it to the block at that
            // position, which may be one already decided (R1).
            self.stop_repairing(step, "a frame for a block that is not open");
            return self.emit(raw, step);
        }
        if self.interrupts_held_block(&event) {
            // Something else happens inside the held block (another block, an event this repair
            // does not read): the block goes out as it came, before it, so nothing overtakes it.
            self.flush_unchanged(step, RefusalCode::Syntax, "another frame came inside the tool block");
        }
        match event {
            Event::Ping | Event::Comment => match self.holding.values_mut().next_back() {
                Some(block) if block.held_bytes + raw.len() <= self.options.max_held_bytes => {
                    block.held_bytes += raw.len();
                    block.frames.push(raw.clone());
                    block.extras.push(raw.clone());
                }
                // Pings past the hold limit: the block goes out as it came, the ping after it.
                Some(_) => {
                    self.flush_unchanged(step, RefusalCode::TooLarge, "pings over the hold limit");
                    self.emit(raw.clone(), step);
                }
                None => self.emit(raw.clone(), step),
            },
            Event::BlockStart { index, tool } => {
                if !self.numbered_as_clients_number(index) || self.stop_reason.is_some() {
                    // A client puts this block where its position says (`content[n]`), and
                    // its deltas and repair would land on another block (attack round 14,
                    // F1); a block after the stop reason is not one the stop reason covers.
                    self.stop_repairing(step, "a block not numbered as clients number it");
                    return self.emit(raw, step);
                }
                self.open_blocks.insert(index);
                if let Some(tool) = tool {
                    let block = HeldBlock {
                        index,
                        id: tool.id.into_owned(),
                        name: tool.name.into_owned(),
                        frames: Vec::new(),
                        held_bytes: 0,
                        extras: Vec::new(),
                        input: String::new(),
                    };
                    self.holding.insert(index, block);
                }
                self.emit(raw.clone(), step);
            }
            Event::InputDelta { index, partial_json } => match self.holding.get_mut(&index) {
                Some(block) => {
                    block.input.push_str(&partial_json);
                    block.held_bytes += raw.len();
                    block.frames.push(raw.clone());
                    if block.held_bytes > self.options.max_held_bytes {
                        // Past the hold limit the block passes through as it comes; its input is
                        // still read so the end of the block can tell valid from not.
                        let mut block = self.holding.remove(&index).expect("held block");
                        for frame in std::mem::take(&mut block.frames) {
                            self.emit(frame, step);
                        }
                        block.extras.clear();
                        self.passing.insert(index, block);
                    }
                }
                None => {
                    if let Some(block) = self.passing.get_mut(&index) {
                        block.input.push_str(&partial_json);
                    }
                    self.emit(raw.clone(), step)
                }
            },
            Event::BlockStop { index } => {
                self.open_blocks.remove(&index);
                if let Some(block) = self.passing.remove(&index) {
                    self.emit(raw.clone(), step);
                    let outcome = match is_valid_for_cli(&block.input) {
                        true => Outcome::valid_unread(),
                        false => Outcome::refused(self.over_hold_limit()),
                    };
                    return step.decisions.push(decision(block, None, outcome));
                }
                let Some(block) = self.holding.remove(&index) else {
                    return self.emit(raw.clone(), step);
                };
                if is_valid_for_cli(&block.input) && self.fits_schema(&block) {
                    for frame in &block.frames {
                        self.emit(frame.clone(), step);
                    }
                    self.emit(raw.clone(), step);
                    step.decisions.push(decision(block, None, Outcome::valid_unread()));
                } else {
                    // Not JSON, or JSON that breaks the schema: it waits for the stop reason, then
                    // is repaired (a lossless coercion) or goes out as it came (refused, invalid).
                    self.waiting_bytes += block.held_bytes + raw.len();
                    self.waiting.push(Segment::Awaiting(block, raw.clone()));
                }
            }
            Event::MessageStart { blocks } => {
                if self.next_index.is_some() || blocks.is_none() {
                    // A second message restarts the clients' numbering; uncountable blocks
                    // leave it unknown.
                    self.stop_repairing(step, "a message whose blocks cannot be numbered");
                } else {
                    self.next_index = blocks.map(|n| n as u64);
                }
                self.emit(raw.clone(), step);
            }
            Event::MessageDelta { stop_reason } => {
                let stop_reason = stop_reason.map(|reason| reason.into_owned());
                // Blocks never stopped were cut (`max_tokens`): they go out as they came.
                let cut: Vec<u64> = self.holding.keys().copied().collect();
                for index in cut {
                    let block = self.holding.remove(&index).expect("held block");
                    let refusal = Refusal::new(RefusalCode::Truncated, "the tool block never ended", None);
                    self.release_unchanged(block, None, refusal, stop_reason.clone(), step);
                }
                self.report_passing(step);
                match stop_reason {
                    // Waiting blocks are resolved at `message_stop`, by the last stop reason:
                    // clients keep the last `message_delta`'s (attack round 14, F2).
                    Some(reason) => {
                        self.stop_reason = match self.stop_reason.take() {
                            Some(Ok(seen)) if seen != reason => Some(Err(())),
                            Some(Err(())) => Some(Err(())),
                            _ => Some(Ok(reason)),
                        };
                    }
                    // An upstream that names no reason (a gateway, a compatible server) may have
                    // cut the input as well as not.
                    None => {
                        self.flush_unchanged(
                            step,
                            RefusalCode::Truncated,
                            "the message_delta names no stop reason: the tool input may have been cut",
                        );
                        self.stop_reason = Some(Err(()));
                    }
                }
                self.emit(raw.clone(), step);
            }
            Event::MessageStop => {
                // Decided when the stream ends (see `finish`): clients read on until then.
                self.after_message_stop = true;
                self.emit(raw.clone(), step);
            }
            Event::End => {
                self.flush_unchanged(step, RefusalCode::Truncated, "the stream ended before the stop reason");
                self.emit(raw.clone(), step);
            }
            Event::Unreadable => {
                // Whatever this frame meant, the frames before it go out first, as they came;
                // and as a client may have read a block in it, the blocks after it may not be
                // numbered as the client numbers them (attack round 14, F3): nothing more is held.
                self.stop_repairing(step, "a frame inside the tool block could not be read");
                self.emit(raw.clone(), step);
            }
            Event::OtherDelta { .. } | Event::Other => self.emit(raw.clone(), step),
        }
    }

    /// Whether `event` is not part of the block being held (or passing through): a block
    /// opening while one is open (another block, or its index used again), another block's
    /// delta or stop, an event this repair does not read. The real API streams one block at a
    /// time, so a held block ends before anything else but a ping comes.
    fn interrupts_held_block(&self, event: &Event<'_>) -> bool {
        let open = |index: &u64| self.holding.contains_key(index) || self.passing.contains_key(index);
        if self.holding.is_empty() && self.passing.is_empty() {
            return false;
        }
        match event {
            Event::Ping | Event::Comment | Event::MessageDelta { .. } | Event::MessageStop | Event::End => false,
            Event::Unreadable => false,
            // A message starting inside a block: the numbering check releases it.
            Event::MessageStart { .. } => false,
            Event::InputDelta { index, .. } | Event::BlockStop { index } => !open(index),
            Event::BlockStart { .. } | Event::OtherDelta { .. } | Event::Other => true,
        }
    }

    /// What was held goes out as it came, and the rest of the stream passes through unread:
    /// its blocks can no longer be told apart as a client tells them.
    fn stop_repairing(&mut self, step: &mut Step, why: &str) {
        self.flush_unchanged(step, RefusalCode::Syntax, why);
        self.misnumbered = true;
    }

    /// Whether `event`, if it names a block (a delta, a stop), names one that is open.
    fn in_an_open_block(&self, event: &Event<'_>) -> bool {
        match event {
            Event::InputDelta { index, .. } | Event::OtherDelta { index } | Event::BlockStop { index } => {
                self.open_blocks.contains(index)
            }
            _ => true,
        }
    }

    /// Whether a block opening at `index` is where clients put it, counting it if so.
    fn numbered_as_clients_number(&mut self, index: u64) -> bool {
        let expected = self.next_index.unwrap_or(index);
        self.next_index = Some(expected + 1);
        index == expected
    }

    fn take_waiting(&mut self) -> Vec<Segment> {
        self.waiting_bytes = 0;
        std::mem::take(&mut self.waiting)
    }

    fn over_hold_limit(&self) -> Refusal {
        Refusal::new(
            RefusalCode::TooLarge,
            format!("tool input over the {} byte hold limit", self.options.max_held_bytes),
            None,
        )
    }

    /// Blocks that passed through past the hold limit and never ended: reported, nothing held.
    fn report_passing(&mut self, step: &mut Step) {
        for block in std::mem::take(&mut self.passing).into_values() {
            let refusal = self.over_hold_limit();
            step.decisions.push(decision(block, None, Outcome::refused(refusal)));
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
    fn resolve(&mut self, stop_reason: String, step: &mut Step) {
        let options = RepairOptions { stop_reason: Some(stop_reason.clone()), ..self.options.repair.clone() };
        for segment in self.take_waiting() {
            match segment {
                Segment::Chunks(chunks) => step.chunks.extend(chunks),
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
                            step.chunks.extend(block.extras.iter().cloned());
                            // The replaced deltas' `id:`, `retry:` and comment lines still reach
                            // the client (attack round 23).
                            let extras: HashSet<*const u8> = block.extras.iter().map(|f| f.as_ptr()).collect();
                            let replaced = block.frames.iter().filter(|frame| !extras.contains(&frame.as_ptr()));
                            step.chunks.extend(sse::other_lines(replaced));
                            step.chunks.push(Bytes::from(repaired_delta(block.index, input)));
                        }
                        _ => step.chunks.extend(block.frames.iter().cloned()),
                    }
                    step.chunks.push(stop_frame);
                    step.decisions.push(decision(block, Some(stop_reason.clone()), outcome));
                }
            }
        }
    }

    /// Everything held goes out exactly as it came, in order.
    fn flush_unchanged(&mut self, step: &mut Step, code: RefusalCode, why: &str) {
        self.report_passing(step);
        for segment in self.take_waiting() {
            match segment {
                Segment::Chunks(chunks) => step.chunks.extend(chunks),
                Segment::Awaiting(block, stop_frame) => {
                    let refusal = Refusal::new(code, why, None);
                    self.release_unchanged(block, Some(stop_frame), refusal, None, step);
                }
            }
        }
        for block in std::mem::take(&mut self.holding).into_values() {
            let refusal = Refusal::new(code, why, None);
            self.release_unchanged(block, None, refusal, None, step);
        }
    }

    fn release_unchanged(
        &mut self,
        mut block: HeldBlock,
        stop_frame: Option<Bytes>,
        refusal: Refusal,
        stop_reason: Option<String>,
        step: &mut Step,
    ) {
        for frame in std::mem::take(&mut block.frames).into_iter().chain(stop_frame) {
            self.emit(frame, step);
        }
        step.decisions.push(decision(block, stop_reason, Outcome::refused(refusal)));
    }
}

fn decision(block: HeldBlock, stop_reason: Option<String>, outcome: Outcome) -> Decision {
    Decision { index: block.index, tool: block.name, tool_use_id: block.id, raw: block.input, stop_reason, outcome }
}
