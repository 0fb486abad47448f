//! Server-sent events framing: bytes in, whole frames out, each kept byte for byte. Line ends
//! are `\r\n`, `\n` or `\r`, as the SSE spec says; a frame ends at an empty line.

use bytes::{Bytes, BytesMut};
use std::borrow::Cow;

/// Splits a byte stream into frames, each ending with its blank line. Frames are split off
/// one buffer and frozen, not copied.
#[derive(Default)]
pub struct FrameSplitter {
    buffer: BytesMut,
    /// Bytes of `buffer` already read.
    scanned: usize,
    /// The line being read is empty and follows a line end inside the frame.
    line_is_empty: bool,
    /// The last line end read was `\r`: a `\n` right after it belongs to the same line end.
    after_cr: bool,
}

impl FrameSplitter {
    /// Appends `chunk` and moves every complete frame into `frames`.
    pub fn push(&mut self, chunk: &[u8], frames: &mut Vec<Bytes>) {
        self.buffer.extend_from_slice(chunk);
        let mut i = self.scanned;
        while i < self.buffer.len() {
            let byte = self.buffer[i];
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                i += 1;
                continue;
            }
            match byte {
                b'\n' | b'\r' if self.line_is_empty => {
                    let end = match (byte, self.buffer.get(i + 1)) {
                        // `\r` last in the buffer: wait, a `\n` may follow and end the frame.
                        (b'\r', None) => break,
                        (b'\r', Some(b'\n')) => i + 2,
                        _ => i + 1,
                    };
                    frames.push(self.buffer.split_to(end).freeze());
                    self.line_is_empty = false;
                    i = 0;
                }
                b'\n' | b'\r' => {
                    self.line_is_empty = true;
                    self.after_cr = byte == b'\r';
                    i += 1;
                }
                _ => {
                    self.line_is_empty = false;
                    i += 1;
                }
            }
        }
        self.scanned = i;
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
}

pub fn parse_frame(raw: &[u8]) -> Frame<'_> {
    let text = std::str::from_utf8(raw).unwrap_or("");
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
    Frame { event, data }
}

/// The lines of `text`, each ended by `\r\n`, `\n` or `\r`.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, tail) = match rest.find(['\r', '\n']) {
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
            assert_eq!(frames, expected, "split at {split}");
            assert_eq!(splitter.take_rest(), &b"event: d"[..]);
        }
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
