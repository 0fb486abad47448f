//! A request body sent upstream as it arrives, chunk by chunk, read on the way for its `tools`
//! member: a long session's request is not held back until its last byte before the upstream
//! sees its first, is never joined into one buffer, and is scanned while it streams, so only
//! its last chunk is left to read when it is all in. Only the chunks the `tools` text may lie
//! in are kept: the conversation before it is let go as soon as it went by, so a request
//! holds no more than its `tools` text and a chunk, and the server's read buffer is reused.
//! What is kept counts against `request_memory_bytes`; past it the `tools` text is not read
//! (the request goes on unread: its stream passes through unrepaired).

use super::budget::Held;
use crate::schema::member_scan::MemberScanner;
use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Weak};
use tokio::sync::oneshot;

/// The body to send upstream, and the text of its top-level `tools` member (`None`: absent,
/// or the body is not an object) once the whole body went through: `length` bytes, or the end
/// of a body of unknown length. Nothing arrives (the receiver errs) when the client or the
/// upstream gives up first. A body that breaks off, or goes past `limit`, ends in a
/// [`ClientBodyError`] (its upstream request fails with it as a cause). The kept chunks are
/// counted in `held`.
pub fn tee(
    body: Body,
    length: Option<usize>,
    limit: usize,
    held: Held,
) -> (reqwest::Body, oneshot::Receiver<Option<Bytes>>, BodyInFlight) {
    let (tools, received) = oneshot::channel();
    let alive = Arc::new(());
    let in_flight = BodyInFlight(Arc::downgrade(&alive));
    let state = (body.into_data_stream(), ToolsReader::new(held), Some(tools), alive);
    let stream = futures_util::stream::unfold(state, move |(mut data, mut reader, mut tools, alive)| async move {
        let Some(chunk) = data.next().await else {
            // The end of a body of unknown length is the end of its data.
            if let (None, Some(tools)) = (length, tools.take()) {
                let _ = tools.send(reader.tools());
            }
            return None;
        };
        let chunk = match chunk {
            Err(error) => Err(ClientBodyError::Broken(error)),
            Ok(bytes) => {
                reader.read(&bytes);
                if reader.kept.seen > limit {
                    tools = None;
                    Err(ClientBodyError::OverLimit)
                } else {
                    if length.is_some_and(|length| reader.kept.seen >= length) {
                        if let Some(tools) = tools.take() {
                            let _ = tools.send(reader.tools());
                        }
                    }
                    Ok(bytes)
                }
            }
        };
        Some((chunk, (data, reader, tools, alive)))
    });
    (reqwest::Body::wrap_stream(stream), received, in_flight)
}

/// Whether a teed body is still to be sent: its stream (and what it holds) lives until the
/// upstream connection sent all of it, or gave up on it.
pub struct BodyInFlight(Weak<()>);

impl BodyInFlight {
    pub fn is_in_flight(&self) -> bool {
        self.0.strong_count() > 0
    }
}

/// Why the client's body, streamed upstream, ended early.
#[derive(Debug, thiserror::Error)]
pub enum ClientBodyError {
    #[error("the request body is over max_request_bytes")]
    OverLimit,
    /// It broke off, or its framing is wrong (a bad chunk size).
    #[error("{0}")]
    Broken(axum::Error),
}

/// Reads a body's chunks for its `tools` member, holding only what its text may need.
struct ToolsReader {
    scanner: MemberScanner,
    kept: Kept,
    /// The member's text once its value ended: from then on no chunk is kept.
    text: Option<Bytes>,
    /// The kept chunks' bytes, counted against the bound over all requests.
    held: Held,
    /// The chunks its text may need could not be held: it is not read.
    given_up: bool,
}

impl ToolsReader {
    fn new(held: Held) -> Self {
        Self { scanner: MemberScanner::new("tools"), kept: Kept::default(), text: None, held, given_up: false }
    }

    fn read(&mut self, chunk: &Bytes) {
        if self.given_up {
            self.kept.seen += chunk.len();
            return;
        }
        self.scanner.push(chunk);
        self.kept.push(chunk.clone());
        if self.text.is_none() {
            // The member's text is all in: it alone is kept, not the body after it.
            self.text = self.scanner.found().map(|span| self.kept.slice(span));
        }
        match self.text {
            Some(_) => self.kept.let_go(),
            None => self.kept.keep_from(self.scanner.needed_from()),
        }
        let kept = self.kept.bytes + self.text.as_ref().map_or(0, Bytes::len);
        let held = self.held.bytes();
        if kept <= held {
            self.held.shrink(held - kept);
        } else if !self.held.grow(kept - held) {
            self.given_up = true;
            self.kept.let_go();
            self.text = None;
            self.held.shrink(held);
        }
    }

    /// The text of the top-level `tools` member once the whole body was read.
    fn tools(&mut self) -> Option<Bytes> {
        if self.given_up {
            return None;
        }
        let span = std::mem::replace(&mut self.scanner, MemberScanner::new("tools")).finish()?;
        Some(self.text.take().unwrap_or_else(|| self.kept.slice(span)))
    }
}

/// Chunks shorter than this are copied together instead of kept one by one: a body sent a
/// byte per chunk would otherwise hold a `Bytes` (and the read buffer behind it) per byte.
const SMALL_CHUNK: usize = 4096;

/// The chunks that went by that may still be needed (references, not copies, but for small
/// chunks, which are gathered into `tail`).
#[derive(Default)]
struct Kept {
    chunks: VecDeque<Bytes>,
    /// Small chunks after the last of `chunks`, copied together.
    tail: BytesMut,
    /// Where the first kept chunk starts in the body.
    start: usize,
    /// Bytes of the body that went by.
    seen: usize,
    /// Bytes of the kept chunks.
    bytes: usize,
}

impl Kept {
    fn push(&mut self, chunk: Bytes) {
        self.seen += chunk.len();
        self.bytes += chunk.len();
        if chunk.len() < SMALL_CHUNK {
            self.tail.extend_from_slice(&chunk);
            if self.tail.len() >= SMALL_CHUNK {
                self.end_tail();
            }
        } else {
            self.end_tail();
            self.chunks.push_back(chunk);
        }
    }

    /// The gathered small chunks become one chunk.
    fn end_tail(&mut self) {
        if !self.tail.is_empty() {
            let tail = std::mem::take(&mut self.tail).freeze();
            self.chunks.push_back(tail);
        }
    }

    /// Lets go of the chunks that end before `needed` (all of them when nothing is needed).
    fn keep_from(&mut self, needed: Option<usize>) {
        let needed = needed.unwrap_or(self.seen);
        if needed >= self.seen {
            self.end_tail();
        }
        while let Some(first) = self.chunks.front() {
            if self.start + first.len() > needed {
                break;
            }
            self.start += first.len();
            self.bytes -= first.len();
            self.chunks.pop_front();
        }
    }

    /// Lets go of every chunk.
    fn let_go(&mut self) {
        self.keep_from(None);
    }

    /// The bytes of `span`: a slice of one chunk when it lies in one, else copied together.
    /// The span lies in the kept chunks (see [`Kept::keep_from`]).
    fn slice(&mut self, span: Range<usize>) -> Bytes {
        self.end_tail();
        let mut start = self.start;
        let mut parts = Vec::new();
        for chunk in &self.chunks {
            let end = start + chunk.len();
            if end > span.start && start < span.end {
                parts.push(chunk.slice(span.start.max(start) - start..span.end.min(end) - start));
            }
            start = end;
        }
        if parts.len() == 1 {
            return parts.pop().unwrap_or_default();
        }
        let mut joined = BytesMut::with_capacity(span.len());
        parts.iter().for_each(|part| joined.extend_from_slice(part));
        joined.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::budget::RequestMemory;

    /// The `tools` text found in `body` read in `chunk`-byte pieces with `memory` to hold them,
    /// and the most bytes held (checked against what the budget counted).
    fn read_within(body: &[u8], chunk: usize, memory: &RequestMemory) -> (Option<Bytes>, usize) {
        let mut reader = ToolsReader::new(memory.hold());
        let mut held = 0;
        for piece in body.chunks(chunk) {
            reader.read(&Bytes::copy_from_slice(piece));
            let chunks: usize = reader.kept.chunks.iter().map(Bytes::len).sum();
            assert_eq!(reader.kept.bytes, chunks + reader.kept.tail.len());
            let kept = reader.kept.bytes + reader.text.as_ref().map_or(0, Bytes::len);
            assert_eq!(reader.held.bytes(), kept, "what is counted is what is kept");
            held = held.max(kept);
        }
        (reader.tools(), held)
    }

    fn read(body: &[u8], chunk: usize) -> (Option<Bytes>, usize) {
        read_within(body, chunk, &RequestMemory::new(usize::MAX, Default::default()))
    }

    #[test]
    fn past_the_shared_bound_the_tools_text_is_not_read_and_nothing_is_held() {
        let body = format!(r#"{{"messages": [], "tools": [{{"name": "{}"}}]}}"#, "a".repeat(500));
        let memory = RequestMemory::new(300, Default::default());
        let (tools, _) = read_within(body.as_bytes(), 100, &memory);
        assert_eq!(tools, None);
        assert!(memory.hold().grow(300), "everything held was given back");
        let (tools, _) = read_within(body.as_bytes(), 100, &RequestMemory::new(700, Default::default()));
        assert!(tools.is_some_and(|tools| tools.len() > 500), "within the bound it is read");
    }

    #[test]
    fn only_the_chunks_the_tools_text_lies_in_are_held() {
        let history = "x".repeat(4000);
        let body: &'static str = Box::leak(
            format!(
                r#"{{"messages": [{{"content": "{history} \"tools\": [0]"}}], "tools": [{{"name": "a"}}], "z": 1}}"#
            )
            .into_boxed_str(),
        );
        for chunk in [1, 7, 100, 1000, body.len()] {
            let (tools, held) = read(body.as_bytes(), chunk);
            assert_eq!(tools.as_deref(), Some(&br#"[{"name": "a"}]"#[..]), "{chunk}-byte chunks");
            if chunk < 1000 {
                assert!(held < 120 + chunk, "{chunk}-byte chunks held {held} bytes");
            }
        }
    }

    #[test]
    fn what_is_let_go_never_holds_the_tools_text() {
        use crate::schema::member::tests::{BROKEN_BODIES, VALID_BODIES};
        for body in VALID_BODIES.into_iter().chain(BROKEN_BODIES) {
            let whole = crate::schema::member::top_level_member(body.as_bytes(), "tools").map(str::as_bytes);
            for chunk in 1..=body.len().max(1) {
                assert_eq!(read(body.as_bytes(), chunk).0.as_deref(), whole, "{body:?} in {chunk}-byte chunks");
            }
        }
    }

    #[test]
    fn after_the_tools_text_ends_the_rest_of_the_body_is_not_held() {
        // Tools first, then a long conversation (attack round 10: 84 bytes of tools held 20 MiB).
        let body = format!(r#"{{"tools": [{{"name": "a"}}], "messages": ["{}"]}}"#, "x".repeat(100_000));
        for chunk in [1, 100, 5000, 64 << 10] {
            let (tools, held) = read(body.as_bytes(), chunk);
            assert_eq!(tools.as_deref(), Some(&br#"[{"name": "a"}]"#[..]), "{chunk}-byte chunks");
            assert!(held <= 15 + chunk.max(SMALL_CHUNK) + 12, "{chunk}-byte chunks held {held} bytes");
        }
    }

    #[test]
    fn tiny_chunks_are_gathered_not_kept_one_by_one() {
        // A body a byte per chunk would otherwise keep a `Bytes`, and its read buffer, per byte.
        let body = format!(r#"{{"messages": [], "tools": ["{}"#, "t".repeat(40_000));
        let mut reader = ToolsReader::new(RequestMemory::new(usize::MAX, Default::default()).hold());
        for byte in body.as_bytes().chunks(1) {
            reader.read(&Bytes::copy_from_slice(byte));
        }
        assert!(reader.kept.chunks.len() <= 40_000 / SMALL_CHUNK + 1, "{} chunks kept", reader.kept.chunks.len());
        assert_eq!(reader.kept.bytes, 40_002, "the text from its `[` is kept, all of it");
    }

    #[test]
    fn a_span_across_chunks_is_the_same_bytes() {
        let text = b"{\"tools\": [1, 2, 3], \"a\": 1}";
        for cut in 0..text.len() {
            let mut kept = Kept::default();
            kept.push(Bytes::copy_from_slice(&text[..cut]));
            kept.push(Bytes::copy_from_slice(&text[cut..]));
            assert_eq!(&kept.slice(10..19)[..], &text[10..19], "cut at {cut}");
        }
    }
}
