//! Input lines read a batch at a time into one buffer (no allocation per line), with the
//! problems met on the way (a line not UTF-8, a failed read) kept in input order.

use memchr::memchr;
use std::io::{self, BufRead};
use std::ops::Range;

/// Lines read and repaired together: enough to keep both cores busy, little to hold.
pub const BATCH_LINES: usize = 4096;

/// Up to [`BATCH_LINES`] readable lines of one source, end-of-line bytes taken off.
#[derive(Debug, Default)]
pub struct Batch {
    text: String,
    /// Each line's 0-based number in the source and its bytes in `text`.
    lines: Vec<(usize, Range<usize>)>,
    /// Lines that could not be read, in order: their 1-based number and why.
    pub problems: Vec<(usize, LineProblem)>,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The `index`th line of the batch: its 0-based number in the source and its text.
    pub fn line(&self, index: usize) -> (usize, &str) {
        let (number, range) = &self.lines[index];
        (*number, &self.text[range.clone()])
    }
}

/// Why one input line could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LineProblem {
    #[error("not UTF-8 (invalid byte at offset {0} of the line): skipped")]
    NotUtf8(usize),
    #[error("reading failed ({0}); the rest of this input is skipped")]
    Read(io::Error),
}

/// A source's lines; one that is not UTF-8 is a problem of its own and the next line goes on.
pub struct Lines<R> {
    reader: R,
    /// Lines read so far (the number of the line just returned).
    number: usize,
    /// A read failed: the rest of the source cannot be trusted.
    failed: bool,
    /// A line that spans more than one fill of the reader's buffer, gathered here.
    spanning: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Self {
        Self { reader, number: 0, failed: false, spanning: Vec::new() }
    }

    /// The next batch, read into `spare`'s buffers (a batch done with); one with no lines
    /// means the source is done (its problems still count).
    pub fn next_batch(&mut self, spare: Option<Batch>) -> Batch {
        let mut batch = spare.unwrap_or_default();
        batch.text.clear();
        batch.lines.clear();
        batch.problems.clear();
        while batch.lines.len() < BATCH_LINES {
            match self.next_line(&mut batch.text) {
                None => break,
                Some(Ok(range)) => batch.lines.push((self.number - 1, range)),
                Some(Err(problem)) => batch.problems.push((self.number, problem)),
            }
        }
        batch
    }

    /// Appends the next line to `text` and gives its range; a line ends at `\n` (`\r\n`), or
    /// at the end of the source.
    fn next_line(&mut self, text: &mut String) -> Option<Result<Range<usize>, LineProblem>> {
        if self.failed {
            return None;
        }
        self.spanning.clear();
        let mut ended = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    self.failed = true;
                    self.number += 1;
                    return Some(Err(LineProblem::Read(error)));
                }
            };
            if available.is_empty() {
                break;
            }
            let Some(end) = memchr(b'\n', available) else {
                let taken = available.len();
                self.spanning.extend_from_slice(available);
                self.reader.consume(taken);
                continue;
            };
            if self.spanning.is_empty() {
                // The whole line is in the reader's buffer: checked and copied once.
                let line = push_line(text, without_bom(self.number, without_cr(&available[..end])));
                self.reader.consume(end + 1);
                self.number += 1;
                return Some(line);
            }
            self.spanning.extend_from_slice(&available[..end]);
            self.reader.consume(end + 1);
            ended = true;
            break;
        }
        if self.spanning.is_empty() && !ended {
            return None;
        }
        self.number += 1;
        let line = if ended { without_cr(&self.spanning) } else { &self.spanning[..] };
        Some(push_line(text, without_bom(self.number - 1, line)))
    }
}

/// The first line (`number` 0) without the UTF-8 byte order mark an editor may put before it.
fn without_bom(number: usize, line: &[u8]) -> &[u8] {
    match number {
        0 => line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line),
        _ => line,
    }
}

/// A line ended by `\n` drops one `\r` before it.
fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn push_line(text: &mut String, line: &[u8]) -> Result<Range<usize>, LineProblem> {
    let line = std::str::from_utf8(line).map_err(|e| LineProblem::NotUtf8(e.valid_up_to()))?;
    let start = text.len();
    text.push_str(line);
    Ok(start..text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(batch: &Batch) -> Vec<(usize, &str)> {
        (0..batch.len()).map(|i| batch.line(i)).collect()
    }

    #[test]
    fn lines_keep_their_numbers_and_lose_only_their_line_ends() {
        // A 4-byte reader buffer makes lines span fills.
        let input: &[u8] = b"first\r\n\nnot \xff utf8\nlong line here\r\nlast\r";
        let mut lines = Lines::new(io::BufReader::with_capacity(4, input));
        let batch = lines.next_batch(None);
        assert_eq!(texts(&batch), [(0, "first"), (1, ""), (3, "long line here"), (4, "last\r")]);
        assert!(matches!(batch.problems[..], [(3, LineProblem::NotUtf8(4))]), "{:?}", batch.problems);
        assert!(lines.next_batch(None).is_empty());
    }

    #[test]
    fn a_bom_before_the_first_line_is_read_past() {
        let input: &[u8] = b"\xef\xbb\xbf{}\n\xef\xbb\xbf{}\n";
        let batch = Lines::new(input).next_batch(None);
        assert_eq!(texts(&batch), [(0, "{}"), (1, "\u{feff}{}")]);
        // A line spanning the reader's fills too.
        let batch = Lines::new(io::BufReader::with_capacity(2, input)).next_batch(None);
        assert_eq!(texts(&batch), [(0, "{}"), (1, "\u{feff}{}")]);
    }

    #[test]
    fn a_failed_read_drops_the_line_it_was_in_and_ends_the_source() {
        /// Gives `a\nb`, then fails.
        struct FailsAfterOneRead(bool);
        impl io::Read for FailsAfterOneRead {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    return Err(io::Error::other("disk gone"));
                }
                buf[..3].copy_from_slice(b"a\nb");
                Ok(3)
            }
        }
        let mut lines = Lines::new(io::BufReader::new(FailsAfterOneRead(false)));
        let batch = lines.next_batch(None);
        assert_eq!(texts(&batch), [(0, "a")]);
        assert!(matches!(batch.problems[..], [(2, LineProblem::Read(_))]), "{:?}", batch.problems);
        assert!(lines.next_batch(None).is_empty());
    }

    #[test]
    fn a_batch_holds_at_most_batch_lines() {
        let input = "x\n".repeat(BATCH_LINES + 1);
        let mut lines = Lines::new(input.as_bytes());
        assert_eq!(lines.next_batch(None).len(), BATCH_LINES);
        let rest = lines.next_batch(None);
        assert_eq!(texts(&rest), [(BATCH_LINES, "x")]);
        assert!(lines.next_batch(None).is_empty());
    }
}
