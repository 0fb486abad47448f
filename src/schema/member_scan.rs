//! [`top_level_member`](super::member::top_level_member) over a body that arrives in chunks: the
//! scan runs as each chunk goes by, so when the last one is in only its own bytes are left to
//! read, and the body is never joined into one buffer. Where the member's value lies is given
//! as a span of the whole body; strings are skipped with `memchr`.

use memchr::memchr;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the object's `{`.
    Start,
    /// Right after `{`: a key, or `}` (an empty object, which has no member).
    FirstKey,
    /// After `,`: a key.
    Key,
    /// Inside a key's string.
    InKey,
    /// After a key: `:`.
    Colon,
    /// After `:`: the value's first byte.
    Value,
    /// Inside a string; `depth` containers are open around it (0: the member's value itself).
    InString {
        escaped: bool,
    },
    /// Inside a container value, between its strings.
    InContainer,
    /// Inside a number or literal value.
    InScalar,
    /// After a value: `,` or `}`.
    AfterValue,
    /// The object ended, or its framing broke.
    Done,
    Failed,
}

/// Where the string being read closes in `rest` (the index of its `"`), or, when it does not
/// close there, whether the byte after `rest` is escaped. `escaped`: `rest[0]` is. Only quotes
/// are searched for (file contents are full of `\n` escapes): a quote after an odd run of
/// backslashes is escaped, and each run is walked once.
fn string_close(rest: &[u8], mut escaped: bool) -> Result<usize, bool> {
    let mut from = 0;
    let odd_run = |from: usize, to: usize, escaped: bool| {
        let run = rest[from..to].iter().rev().take_while(|&&b| b == b'\\').count();
        (run + usize::from(escaped && run == to - from)) % 2 == 1
    };
    while let Some(n) = memchr(b'"', &rest[from..]) {
        let at = from + n;
        if !odd_run(from, at, escaped) {
            return Ok(at);
        }
        (from, escaped) = (at + 1, false);
    }
    Err(odd_run(from, rest.len(), escaped))
}

/// Where a walk through a container's bytes stopped.
enum Walk {
    /// Its closing bracket ends just before this index.
    Closed(usize),
    /// The chunk ended inside one of its strings (whose next byte is escaped, or not).
    InString(bool),
    /// The chunk ended between its strings.
    Open,
}

/// Strings shorter than this are closed by a plain loop: most strings in a request are keys
/// and short values, where starting `memchr` costs more than the string.
const SHORT_STRING: usize = 32;

/// Walks a container's bytes from `i`, `depth` containers open, counting brackets and skipping
/// strings, until the container closes or the chunk ends.
fn walk_container(chunk: &[u8], mut i: usize, depth: &mut usize) -> Walk {
    while i < chunk.len() {
        match chunk[i] {
            b'"' => {
                let rest = &chunk[i + 1..];
                let short = &rest[..rest.len().min(SHORT_STRING)];
                let close = match short.iter().position(|&b| b == b'"' || b == b'\\') {
                    Some(n) if short[n] == b'"' => Ok(n),
                    _ => string_close(rest, false),
                };
                match close {
                    Ok(n) => i += n + 2,
                    Err(escaped) => return Walk::InString(escaped),
                }
                continue;
            }
            b'{' | b'[' => *depth += 1,
            b'}' | b']' => {
                *depth -= 1;
                if *depth == 0 {
                    return Walk::Closed(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    Walk::Open
}

/// Finds the span of the top-level member `name` as the body's chunks go by.
pub struct MemberScanner {
    name: &'static [u8],
    state: State,
    /// Bytes of the body seen before the current chunk.
    offset: usize,
    depth: usize,
    key: Vec<u8>,
    key_matches: bool,
    value_start: usize,
    found: Option<Range<usize>>,
}

fn is_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\r' | b'\t')
}

impl MemberScanner {
    pub fn new(name: &'static str) -> Self {
        Self {
            name: name.as_bytes(),
            state: State::Start,
            offset: 0,
            depth: 0,
            key: Vec::new(),
            key_matches: false,
            value_start: 0,
            found: None,
        }
    }

    /// Reads the next chunk of the body.
    pub fn push(&mut self, chunk: &[u8]) {
        let mut i = 0;
        while i < chunk.len() {
            let byte = chunk[i];
            let at = self.offset + i;
            match self.state {
                State::Done | State::Failed => break,
                State::Start | State::FirstKey | State::Key | State::Colon | State::Value | State::AfterValue
                    if is_blank(byte) => {}
                State::Start => self.state = if byte == b'{' { State::FirstKey } else { State::Failed },
                State::FirstKey | State::Key => {
                    self.state = match byte {
                        b'"' => {
                            self.key.clear();
                            State::InKey
                        }
                        // `{}` has no member, and `{"a": 1,}` breaks the framing.
                        _ => State::Failed,
                    }
                }
                // An escaped key may spell the member for the upstream's parser (see
                // `top_level_member`): the scan gives up.
                State::InKey if byte == b'\\' => self.state = State::Failed,
                State::InKey if byte == b'"' => {
                    self.key_matches = self.key == self.name;
                    self.state = State::Colon;
                }
                State::InKey => {
                    if self.key.len() <= self.name.len() {
                        self.key.push(byte);
                    }
                }
                State::Colon => self.state = if byte == b':' { State::Value } else { State::Failed },
                State::Value => {
                    self.value_start = at;
                    self.state = match byte {
                        b'"' => {
                            self.depth = 0;
                            State::InString { escaped: false }
                        }
                        b'{' | b'[' => {
                            self.depth = 1;
                            State::InContainer
                        }
                        b',' | b'}' | b']' => State::Failed,
                        _ => State::InScalar,
                    }
                }
                State::InString { escaped } => match string_close(&chunk[i..], escaped) {
                    Ok(n) => {
                        i += n;
                        self.state =
                            if self.depth == 0 { self.value_ended(self.offset + i + 1) } else { State::InContainer };
                    }
                    Err(escaped) => {
                        self.state = State::InString { escaped };
                        break;
                    }
                },
                // Inside a container only brackets and strings matter: walked in one loop.
                State::InContainer => match walk_container(chunk, i, &mut self.depth) {
                    Walk::Closed(end) => {
                        i = end;
                        self.state = self.value_ended(self.offset + end);
                        continue;
                    }
                    Walk::InString(escaped) => {
                        self.state = State::InString { escaped };
                        break;
                    }
                    Walk::Open => break,
                },
                State::InScalar => {
                    if matches!(byte, b',' | b'}' | b']') || is_blank(byte) {
                        self.state = self.value_ended(at);
                        // The terminator is read again as what follows the value.
                        continue;
                    }
                }
                State::AfterValue => {
                    self.state = match byte {
                        b',' => State::Key,
                        b'}' => State::Done,
                        _ => State::Failed,
                    }
                }
            }
            i += 1;
        }
        self.offset += chunk.len();
    }

    /// The first byte of the body read so far that the member's span may still need: the
    /// start of the member's value once it began; `None` when no byte read so far is needed
    /// (so the caller may let go of them).
    pub fn needed_from(&self) -> Option<usize> {
        if let Some(found) = &self.found {
            return Some(found.start);
        }
        let in_value = matches!(self.state, State::InString { .. } | State::InContainer | State::InScalar);
        (self.key_matches && in_value).then_some(self.value_start)
    }

    /// The member's span as soon as its value ended (the rest of the body is still read, for
    /// a second member of the name, which [`MemberScanner::finish`] refuses).
    pub fn found(&self) -> Option<Range<usize>> {
        self.found.clone()
    }

    fn value_ended(&mut self, end: usize) -> State {
        if self.key_matches {
            if self.found.is_some() {
                return State::Failed;
            }
            self.found = Some(self.value_start..end);
        }
        State::AfterValue
    }

    /// The member's span once the whole body was read; `None` as `top_level_member` gives it.
    pub fn finish(self) -> Option<Range<usize>> {
        (self.state == State::Done).then_some(self.found).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::member::tests::{BROKEN_BODIES, VALID_BODIES};
    use crate::schema::member::top_level_member;
    use proptest::prelude::*;

    fn scanned(body: &[u8], cuts: &[usize]) -> Option<String> {
        let mut scanner = MemberScanner::new("tools");
        let mut from = 0;
        for &cut in cuts.iter().chain([&body.len()]) {
            let cut = cut.clamp(from, body.len());
            scanner.push(&body[from..cut]);
            from = cut;
        }
        scanner.finish().map(|span| String::from_utf8(body[span].to_vec()).unwrap())
    }

    #[test]
    fn finds_what_the_whole_body_scan_finds() {
        let more = [r#"{"tools": 12,"a":1}"#, r#"{"tools": "x"}"#, r#"{"toolsx": [1], "tool": 2}"#];
        for body in VALID_BODIES.into_iter().chain(BROKEN_BODIES).chain(more) {
            let whole = top_level_member(body.as_bytes(), "tools").map(String::from);
            for cut in 0..=body.len() {
                assert_eq!(scanned(body.as_bytes(), &[cut]), whole, "{body:?} cut at {cut}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_text_cut_anywhere_scans_like_the_whole(
            body in "[{}\\[\\]\",:\\\\ a-z0-9\n]{0,40}",
            prefix in prop_oneof![Just(""), Just("{\"tools\": "), Just("{\"a\": 1, \"tools\": [")],
            cuts in proptest::collection::vec(0usize..60, 0..4),
        ) {
            let body = format!("{prefix}{body}");
            let mut cuts = cuts;
            cuts.sort();
            let whole = top_level_member(body.as_bytes(), "tools").map(String::from);
            prop_assert_eq!(scanned(body.as_bytes(), &cuts), whole);
        }
    }
}
