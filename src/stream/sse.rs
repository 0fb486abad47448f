//! Server-sent events framing: bytes in, whole frames out, each kept byte for byte.

use std::borrow::Cow;

/// Splits a byte stream into frames, each ending with its blank line.
#[derive(Default)]
pub struct FrameSplitter {
    buffer: Vec<u8>,
    /// Bytes of `buffer` already searched for a frame end.
    scanned: usize,
}

impl FrameSplitter {
    /// Appends `chunk` and moves every complete frame into `frames`.
    pub fn push(&mut self, chunk: &[u8], frames: &mut Vec<Vec<u8>>) {
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        let mut i = self.scanned.saturating_sub(3).max(start);
        while i < self.buffer.len() {
            if let Some(len) = frame_end_at(&self.buffer[i..]) {
                let end = i + len;
                frames.push(self.buffer[start..end].to_vec());
                start = end;
                i = end;
            } else {
                i += 1;
            }
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
    }

    /// Bytes of an unfinished frame, taken at the end of the stream.
    pub fn take_rest(&mut self) -> Vec<u8> {
        self.scanned = 0;
        std::mem::take(&mut self.buffer)
    }

    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
}

/// The length of a blank-line frame terminator starting at `bytes[0]`, if there is one.
fn frame_end_at(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [b'\r', b'\n', b'\r', b'\n', ..] => Some(4),
        [b'\n', b'\n', ..] | [b'\r', b'\r', ..] => Some(2),
        [b'\n', b'\r', b'\n', ..] => Some(3),
        _ => None,
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
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_on_any_blank_line_style_across_chunks() {
        let input = b"event: a\ndata: 1\n\nevent: b\r\ndata: 2\r\n\r\nevent: c\ndata: 3\n\nevent: d";
        for split in 0..input.len() {
            let mut splitter = FrameSplitter::default();
            let mut frames = Vec::new();
            splitter.push(&input[..split], &mut frames);
            splitter.push(&input[split..], &mut frames);
            let expected: Vec<&[u8]> =
                vec![b"event: a\ndata: 1\n\n", b"event: b\r\ndata: 2\r\n\r\n", b"event: c\ndata: 3\n\n"];
            assert_eq!(frames, expected, "split at {split}");
            assert_eq!(splitter.take_rest(), b"event: d");
        }
    }

    #[test]
    fn frame_fields_are_read_like_the_sse_spec_says() {
        let frame = parse_frame(b"event: content_block_delta\r\ndata: {\"a\":\ndata: 1}\n: comment\n\n");
        assert_eq!(frame.event, Some("content_block_delta"));
        assert_eq!(frame.data.as_deref(), Some("{\"a\":\n1}"));
        assert_eq!(parse_frame(b"data:x\n\n").event, None);
    }
}
