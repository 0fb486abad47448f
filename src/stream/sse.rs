//! Server-sent events framing: bytes in, whole frames out, each kept byte for byte. Line ends
//! are `\r\n`, `\n` or `\r`, as the SSE spec says; a frame ends at an empty line.

use bytes::{Bytes, BytesMut};
use std::borrow::Cow;

/// Splits a byte stream into frames, each ending with its blank line. Frames are split off
/// one buffer and frozen, not copied. A frame ended at a blank `\r` that came last in a chunk
/// may be followed by that line end's `\n`: it goes out first in the next frame.
#[derive(Default)]
pub struct FrameSplitter {
    buffer: BytesMut,
    /// Bytes of `buffer` already read.
    scanned: usize,
    /// The line being read is empty and follows a line end inside the frame.
    line_is_empty: bool,
    /// The last line end read was `\r`: a `\n` right after it belongs to the same line end.
    after_cr: bool,
    /// The frame's last line ended `\r\n`: its blank line's `\r` will be followed by `\n`.
    crlf_before: bool,
}

impl FrameSplitter {
    /// Appends `chunk` and moves every complete frame into `frames`. Jumps from line end to
    /// line end (`memchr`), so the bytes of a line are not looked at one by one.
    pub fn push(&mut self, chunk: &[u8], frames: &mut Vec<Bytes>) {
        self.buffer.extend_from_slice(chunk);
        let mut i = self.scanned;
        loop {
            if self.after_cr {
                let Some(&byte) = self.buffer.get(i) else { break };
                self.after_cr = false;
                self.crlf_before = byte == b'\n';
                if byte == b'\n' {
                    i += 1;
                    continue;
                }
            }
            let Some(offset) = memchr::memchr2(b'\n', b'\r', &self.buffer[i..]) else {
                if i < self.buffer.len() {
                    self.line_is_empty = false;
                }
                i = self.buffer.len();
                break;
            };
            if offset > 0 {
                self.line_is_empty = false;
            }
            let at = i + offset;
            let byte = self.buffer[at];
            if self.line_is_empty {
                let end = match (byte, self.buffer.get(at + 1)) {
                    (b'\r', Some(b'\n')) => at + 2,
                    // `\r` last in the buffer after `\r\n` line ends: wait, its `\n` is on the way.
                    (b'\r', None) if self.crlf_before => {
                        i = at;
                        break;
                    }
                    // After `\r` or `\n` line ends it ends the frame now: a stream with `\r`
                    // line ends is not held until its next byte (attack round 21). A `\n` that
                    // does follow belongs to this line end and goes out first in the next frame.
                    (b'\r', None) => {
                        self.after_cr = true;
                        at + 1
                    }
                    _ => at + 1,
                };
                frames.push(self.buffer.split_to(end).freeze());
                self.line_is_empty = false;
                i = 0;
            } else {
                self.line_is_empty = true;
                self.after_cr = byte == b'\r';
                self.crlf_before = false;
                i = at + 1;
            }
        }
        self.scanned = i;
    }

    /// At the end of the stream: a frame whose last `\r` waited for a `\n` that never came is
    /// complete.
    pub fn finish(&mut self, frames: &mut Vec<Bytes>) {
        if self.line_is_empty && self.buffer.get(self.scanned) == Some(&b'\r') && self.scanned + 1 == self.buffer.len()
        {
            frames.push(std::mem::take(&mut self.buffer).freeze());
            *self = Self::default();
        }
    }

    /// Bytes of an unfinished frame, taken at the end of the stream.
    pub fn take_rest(&mut self) -> Bytes {
        let rest = std::mem::take(&mut self.buffer).freeze();
        *self = Self::default();
        rest
    }

    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
}

/// The fields of one frame that the repair needs.
#[derive(Debug, PartialEq)]
pub struct Frame<'a> {
    pub event: Option<&'a str>,
    pub data: Option<Cow<'a, str>>,
    /// The frame is not UTF-8: clients decode it leniently, so what it means to them is unknown.
    pub not_utf8: bool,
}

pub fn parse_frame(raw: &[u8]) -> Frame<'_> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Frame { event: None, data: None, not_utf8: true };
    };
    let mut event = None;
    let mut data: Option<Cow<'_, str>> = None;
    for line in lines(text) {
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => event = Some(value),
            "data" => {
                data = Some(match data {
                    None => Cow::Borrowed(value),
                    Some(previous) => Cow::Owned(format!("{previous}\n{value}")),
                })
            }
            _ => {}
        }
    }
    Frame { event, data, not_utf8: false }
}

/// The lines of `frames` other than their `event` and `data` fields (`id:`, `retry:`,
/// comments), as one frame of their own: what a client still reads of frames a repair
/// replaces (its last event id, its retry delay). `None` when there are none.
pub fn other_lines<'a>(frames: impl IntoIterator<Item = &'a Bytes>) -> Option<Bytes> {
    let mut kept = String::new();
    for frame in frames {
        let Ok(text) = std::str::from_utf8(frame) else { continue };
        for line in lines(text).filter(|line| !line.is_empty()) {
            let field = line.split_once(':').map_or(line, |(field, _)| field);
            if field != "event" && field != "data" {
                kept.push_str(line);
                kept.push('\n');
            }
        }
    }
    (!kept.is_empty()).then(|| {
        kept.push('\n');
        Bytes::from(kept)
    })
}

/// The lines of `text`, each ended by `\r\n`, `\n` or `\r`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, tail) = match memchr::memchr2(b'\r', b'\n', rest.as_bytes()) {
            Some(end) => {
                let ending = if rest[end..].starts_with("\r\n") { 2 } else { 1 };
                (&rest[..end], &rest[end + ending..])
            }
            None => (rest, ""),
        };
        rest = tail;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The splitter as first written, a byte at a time: the oracle for the one that jumps.
    fn frames_byte_by_byte(input: &[u8]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let (mut frames, mut current, mut line_is_empty, mut after_cr) = (Vec::new(), Vec::new(), false, false);
        let mut i = 0;
        while i < input.len() {
            let byte = input[i];
            current.push(byte);
            i += 1;
            if std::mem::take(&mut after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\r' if line_is_empty && input.get(i) == Some(&b'\n') => {
                    current.push(b'\n');
                    i += 1;
                    frames.push(std::mem::take(&mut current));
                    line_is_empty = false;
                }
                b'\n' | b'\r' if line_is_empty => {
                    frames.push(std::mem::take(&mut current));
                    line_is_empty = false;
                }
                b'\n' | b'\r' => {
                    line_is_empty = true;
                    after_cr = byte == b'\r';
                }
                _ => line_is_empty = false,
            }
        }
        (frames, current)
    }

    /// A cut between a blank line's `\r` and its `\n` ends the frame at the `\r` and starts
    /// the next with the `\n`; the oracle, reading ahead, keeps both in one frame. This moves
    /// such a `\n` back, for comparing.
    fn joined_at_cr_lf(frames: &[Bytes], rest: &[u8]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut frames: Vec<Vec<u8>> = frames.iter().map(|f| f.to_vec()).collect();
        let mut rest = rest.to_vec();
        for at in 1..=frames.len() {
            let (before, after) = frames.split_at_mut(at);
            let previous = before.last_mut().expect("at >= 1");
            let next = after.first_mut().unwrap_or(&mut rest);
            if previous.ends_with(b"\r") && next.first() == Some(&b'\n') {
                next.remove(0);
                previous.push(b'\n');
            }
        }
        (frames, rest)
    }

    proptest! {
        #[test]
        fn jumping_splits_like_reading_each_byte(
            input in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(b':')], 0..40),
            cuts in proptest::collection::vec(0usize..40, 0..4),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut.min(input.len())).collect();
            cuts.sort();
            let mut splitter = FrameSplitter::default();
            let mut frames = Vec::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([input.len()]) {
                splitter.push(&input[from..cut], &mut frames);
                from = cut;
            }
            splitter.finish(&mut frames);
            let rest = splitter.take_rest();
            let (frames, rest) = joined_at_cr_lf(&frames, &rest);
            let (expected, expected_rest) = frames_byte_by_byte(&input);
            prop_assert_eq!(frames, expected);
            prop_assert_eq!(rest, expected_rest);
        }
    }

    #[test]
    fn frames_split_on_any_blank_line_style_across_chunks() {
        let input =
            b"event: a\ndata: 1\n\nevent: b\r\ndata: 2\r\n\r\nevent: c\rdata: 3\r\revent: e\r\n\rx: 1\n\revent: d";
        let expected: Vec<&[u8]> = vec![
            b"event: a\ndata: 1\n\n",
            b"event: b\r\ndata: 2\r\n\r\n",
            b"event: c\rdata: 3\r\r",
            b"event: e\r\n\r",
            b"x: 1\n\r",
        ];
        for split in 0..input.len() {
            let mut splitter = FrameSplitter::default();
            let mut frames = Vec::new();
            splitter.push(&input[..split], &mut frames);
            splitter.push(&input[split..], &mut frames);
            let (frames, rest) = joined_at_cr_lf(&frames, &splitter.take_rest());
            assert_eq!(frames, expected, "split at {split}");
            assert_eq!(rest, b"event: d", "split at {split}");
        }
    }

    #[test]
    fn a_frame_with_cr_line_ends_goes_out_at_its_blank_line() {
        // Not held until a next byte that may never come (attack round 21).
        let mut splitter = FrameSplitter::default();
        let mut frames = Vec::new();
        splitter.push(b"event: message_stop\rdata: {}\r\r", &mut frames);
        assert_eq!(frames, [&b"event: message_stop\rdata: {}\r\r"[..]]);
        // A `\n` after it is the same line end: it does not end an empty frame.
        splitter.push(b"\n\nevent: ping\n\n", &mut frames);
        assert_eq!(frames[1..], [&b"\n\nevent: ping\n\n"[..]]);
        assert_eq!(splitter.buffered(), 0);
    }

    #[test]
    fn the_lines_a_repair_would_drop_are_kept_in_a_frame_of_their_own() {
        let frames = [
            Bytes::from_static(b"event: content_block_delta\nid: 41\ndata: {}\n\n"),
            Bytes::from_static(b": trace=abc\r\nretry: 3000\r\ndata: {}\r\nid: 42\r\n\r\n"),
        ];
        let kept = other_lines(&frames).unwrap();
        assert_eq!(kept, &b"id: 41\n: trace=abc\nretry: 3000\nid: 42\n\n"[..]);
        assert_eq!(parse_frame(&kept).data, None, "a frame no client dispatches");
        assert_eq!(other_lines(&[Bytes::from_static(b"event: x\ndata: 1\n\n")]), None);
    }

    #[test]
    fn frame_fields_are_read_like_the_sse_spec_says() {
        let frame = parse_frame(b"event: content_block_delta\r\ndata: {\"a\":\ndata: 1}\n: comment\n\n");
        assert_eq!(frame.event, Some("content_block_delta"));
        assert_eq!(frame.data.as_deref(), Some("{\"a\":\n1}"));
        assert_eq!(parse_frame(b"data:x\n\n").event, None);
    }

    #[test]
    fn cr_only_and_mixed_line_ends_are_line_ends() {
        for raw in [
            &b"event: content_block_stop\rdata: {\"index\":1}\r\r"[..],
            b"event: content_block_stop\r\ndata: {\"index\":1}\r\n\r\n",
            b"event: content_block_stop\ndata: {\"index\":1}\r\r\n",
        ] {
            let frame = parse_frame(raw);
            assert_eq!(frame.event, Some("content_block_stop"), "{raw:?}");
            assert_eq!(frame.data.as_deref(), Some("{\"index\":1}"), "{raw:?}");
        }
    }
}
