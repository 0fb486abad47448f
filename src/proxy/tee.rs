//! A request body sent upstream as it arrives, chunk by chunk, read on the way for its `tools`
//! member: a long session's request is not held back until its last byte before the upstream
//! sees its first, is never joined into one buffer, and is scanned while it streams, so only
//! its last chunk is left to read when it is all in.

use crate::schema::member_scan::MemberScanner;
use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use std::ops::Range;
use tokio::sync::oneshot;

/// The body to send upstream, and the text of its top-level `tools` member (`None`: absent,
/// or the body is not an object) once `length` bytes went through. Nothing arrives (the
/// receiver errs) when the client or the upstream gives up first.
pub fn tee(body: Body, length: usize) -> (reqwest::Body, oneshot::Receiver<Option<Bytes>>) {
    let (tools, received) = oneshot::channel();
    let state = (body.into_data_stream(), Kept::default(), MemberScanner::new("tools"), Some(tools));
    let stream = futures_util::stream::unfold(state, move |(mut data, mut kept, mut scanner, mut tools)| async move {
        let chunk = data.next().await?;
        if let Ok(bytes) = &chunk {
            scanner.push(bytes);
            kept.push(bytes.clone());
            if kept.len >= length {
                if let Some(tools) = tools.take() {
                    let scanned = std::mem::replace(&mut scanner, MemberScanner::new("tools"));
                    let _ = tools.send(scanned.finish().map(|span| kept.slice(span)));
                    kept = Kept::default();
                }
            }
        }
        Some((chunk, (data, kept, scanner, tools)))
    });
    (reqwest::Body::wrap_stream(stream), received)
}

/// The chunks that went by (references, not copies).
#[derive(Default)]
struct Kept {
    chunks: Vec<Bytes>,
    len: usize,
}

impl Kept {
    fn push(&mut self, chunk: Bytes) {
        self.len += chunk.len();
        self.chunks.push(chunk);
    }

    /// The bytes of `span`: a slice of one chunk when it lies in one, else copied together.
    fn slice(&self, span: Range<usize>) -> Bytes {
        let mut start = 0;
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
