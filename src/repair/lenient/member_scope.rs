//! Whether key-shaped text inside a string with raw quotes could be a member in some reading.
//!
//! Text like `"level": ` inside such a string may be a key whose string ended too early. Where
//! it lands in that reading is bounded by the text around it: a member of an object still open
//! here (this one or an enclosing one), or of an object opened inside the value's own text. If
//! none of those objects takes the name, no reading that makes it a key validates, so it does
//! not block the reading that keeps it as text — provided the text around it says it is the
//! text's own: inside a `{` the string itself opened (`"{"name": "widget", "qty": 2}"`), or
//! mid-line after other text (`if __name__ == "__main__":`), not after a comma or a quote
//! where a member's shape would stand (`"echo "hi" > f", "foo": 1`).

use super::parser::{FrameKind, Parser};
use crate::schema::ShapeId;

impl Parser<'_> {
    /// Whether `name` (raw text between two quotes) may be a member in a reading that
    /// validates, for a value of shape `value_shape` inside the open containers.
    pub(super) fn may_be_member(&self, name: &str, value_shape: ShapeId) -> bool {
        // An escape in the name, or an array open here (a new item object may start in the
        // text): the places a member could land are not bounded, so it may be one.
        if name.contains('\\') || self.frames.iter().any(|f| f.kind != FrameKind::Object) {
            return true;
        }
        let open_object_takes =
            self.frames.iter().any(|frame| frame.open || frame.keys.as_ref().is_none_or(|keys| keys.contains(&name)));
        open_object_takes || !self.shapes.holds_only_scalars(value_shape)
    }

    /// Whether the quoted key from the quote at `open` to the one at `close` (a `:` follows)
    /// inside a string is the string's text: no reading can make it a member, and it stands
    /// inside a `{` of the text (`brace_depth`) or after other text on its line.
    pub(super) fn key_in_string_is_text(
        &self,
        open: usize,
        close: usize,
        value_shape: ShapeId,
        brace_depth: usize,
    ) -> bool {
        if self.may_be_member(&self.src[open + 1..close], value_shape) {
            return false;
        }
        let before = self.src[..open].trim_end_matches([' ', '\t']);
        let separated = before
            .as_bytes()
            .last()
            .is_none_or(|b| matches!(b, b',' | b'"' | b'\'' | b'\n' | b'\r' | b'[' | b'{' | b':'));
        brace_depth > 0 || !separated
    }

    /// Whether what follows a quote at `after` (`, "qty":`) is a member's shape that is the
    /// string's own text: inside a `{` the string opened, naming a key no reading can take.
    pub(super) fn member_after_is_text(&self, after: usize, value_shape: ShapeId, brace_depth: usize) -> bool {
        let bytes = self.src.as_bytes();
        let comma = self.skip_blank(after);
        if brace_depth == 0 || bytes.get(comma) != Some(&b',') {
            return false;
        }
        let open = self.skip_blank(comma + 1);
        if bytes.get(open) != Some(&b'"') {
            return false;
        }
        let Some(close) = self.src[open + 1..].find('"').map(|n| open + 1 + n) else {
            return false;
        };
        self.byte_after_ws(close + 1) == Some(b':') && !self.may_be_member(&self.src[open + 1..close], value_shape)
    }
}
