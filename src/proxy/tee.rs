//! A request body sent upstream as it arrives, chunk by chunk, read on the way for its `tools`
//! member: a long session's request is not held back until its last byte before the upstream
//! sees its first, is never joined into one buffer, and is scanned while it streams, so only
//! its last chunk is left to read when it is all in. Only the chunks the `tools` text may lie
//! in are kept: the conversation before it is let go as soon as it went by, so a request
//! holds no more than its `tools` text and a chunk, and the server's read buffer is reused.

use crate::schema::member_scan::MemberScanner;
use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use std::collections::VecDeque;
use std::ops::Range;
use tokio::sync::oneshot;

/// The body to send upstream, and the text of its top-level `tools` member (`None`: absent,
/// or the body is not an object) once `length` bytes went through. Nothing arrives (the
/// receiver errs) when the client or the upstream gives up first.
pub fn tee(body: Body, length: usize) -> (reqwest::Body, oneshot::Receiver<Option<Bytes>>) {
    let (tools, received) = oneshot::channel();
    let state = (body.into_data_stream(), ToolsReader::default(), Some(tools));
    let stream = futures_util::stream::unfold(state, move |(mut data, mut reader, mut tools)| async move {
        let chunk = data.next().await?;
        if let Ok(bytes) = &chunk {
            reader.read(bytes);
            if reader.kept.seen >= length {
                if let Some(tools) = tools.take() {
                    let _ = tools.send(std::mem::take(&mut reader).tools());
                }
            }
        }
        Some((chunk, (data, reader, tools)))
    });
    (reqwest::Body::wrap_stream(stream), received)
}

/// Reads a body's chunks for its `tools` member, holding only what its text may need.
struct ToolsReader {
    scanner: MemberScanner,
    kept: Kept,
}

impl Default for ToolsReader {
    fn default() -> Self {
        Self { scanner: MemberScanner::new("tools"), kept: Kept::default() }
    }
}

impl ToolsReader {
    fn read(&mut self, chunk: &Bytes) {
        self.scanner.push(chunk);
        self.kept.push(chunk.clone());
        self.kept.keep_from(self.scanner.needed_from());
    }

    /// The text of the top-level `tools` member once the whole body was read.
    fn tools(self) -> Option<Bytes> {
        self.scanner.finish().map(|span| self.kept.slice(span))
    }
}

/// The chunks that went by that may still be needed (references, not copies).
#[derive(Default)]
struct Kept {
    chunks: VecDeque<Bytes>,
    /// Where the first kept chunk starts in the body.
    start: usize,
    /// Bytes of the body that went by.
    seen: usize,
}

impl Kept {
    fn push(&mut self, chunk: Bytes) {
        self.seen += chunk.len();
        self.chunks.push_back(chunk);
    }

    /// Lets go of the chunks that end before `needed` (all of them when nothing is needed).
    fn keep_from(&mut self, needed: Option<usize>) {
        let needed = needed.unwrap_or(self.seen);
        while let Some(first) = self.chunks.front() {
            if self.start + first.len() > needed {
                break;
            }
            self.start += first.len();
            self.chunks.pop_front();
        }
    }

    /// The bytes of `span`: a slice of one chunk when it lies in one, else copied together.
    /// The span lies in the kept chunks (see [`Kept::keep_from`]).
    fn slice(&self, span: Range<usize>) -> Bytes {
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

    /// The `tools` text found in `body` read in `chunk`-byte pieces, and the most bytes held.
    fn read(body: &[u8], chunk: usize) -> (Option<Bytes>, usize) {
        let mut reader = ToolsReader::default();
        let mut held = 0;
        for piece in body.chunks(chunk) {
            reader.read(&Bytes::copy_from_slice(piece));
            held = held.max(reader.kept.chunks.iter().map(Bytes::len).sum());
        }
        (reader.tools(), held)
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
