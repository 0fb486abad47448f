//! Comment lengths without rescanning: a look ahead asks "is there a comment here, and how long
//! is it?" at many positions of one long line, so the end of the line and the next `*/` are
//! remembered instead of searched for again (the parse stays linear).

use crate::repair::lexeme;
use std::cell::Cell;

#[derive(Debug, Default)]
pub struct CommentFinder {
    /// A line comment found at `from` runs to `to`: so does one starting inside it.
    line: Cell<(usize, usize)>,
    /// From `from` the first `*/` starts at `to` (the input's length: there is none).
    block: Cell<(usize, usize)>,
}

impl CommentFinder {
    /// The length of the comment starting at `pos`, as `lexeme::comment_len` says; the lexeme
    /// runs only where what it would find is not already known.
    pub fn len_at(&self, src: &str, pos: usize) -> Option<usize> {
        let rest = src.get(pos..)?;
        if rest.starts_with("//") {
            let (from, to) = self.line.get();
            if from < pos && pos <= to {
                return Some(to - pos);
            }
            let len = lexeme::comment_len(rest)?;
            self.line.set((pos, pos + len));
            return Some(len);
        }
        if rest.starts_with("/*") {
            let (from, to) = self.block.get();
            if from < pos + 2 && pos + 2 <= to {
                return (to < src.len()).then(|| to + 2 - pos);
            }
            let close = lexeme::comment_len(rest).map_or(src.len(), |len| pos + len - 2);
            self.block.set((pos + 2, close));
            return (close < src.len()).then(|| close + 2 - pos);
        }
        None
    }
}

/// Checks the finder against the lexeme it stands in for.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_finder_agrees_with_the_lexeme_wherever_it_is_asked() {
        let src = "a // b /* c\n/* d */ e /* f // g\n */ h // i";
        let finder = CommentFinder::default();
        for pos in (0..src.len()).rev().chain(0..src.len()) {
            assert_eq!(finder.len_at(src, pos), lexeme::comment_len(&src[pos..]), "at {pos}");
        }
    }
}
