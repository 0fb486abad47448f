//! A repair that decoded JSON a second time (a parameter of foreign call syntax holding JSON, a
//! string holding JSON, a double-encoded input, an envelope's `arguments` string) may have read
//! a backslash of the text's own as an escape: `["C:\new\tmp"]` gives "C:⏎ew⇥mp", `"\bTODO\b"`
//! a backspace, `"src\tests"` a tab. The lenient parser refuses these where it reads them; this
//! is the same question asked of the result.

use super::edit::{Edit, EditKind};
use super::lexeme::{after_drive_letter, path_like_escape, spot_after, text_starts_with_word, EscapeSpot};
use super::outcome::{Outcome, Refusal, RefusalCode, Status};
use serde_json::Value;

/// What a decoded string holds that a backslash of the text's own may have become.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Doubt {
    /// A control character right after a drive letter, before a letter or digit (`C:` `\n` `ew`).
    DriveLetter,
    /// A backspace or form feed (`\bTODO\b`, `\frac`): no tool input means one.
    RareControl,
    /// A line break or tab between letters or digits inside a word (`cd src\tests`).
    InsideWord,
}

/// A repaired outcome refused when its decoding gave a control character a backslash of the
/// text's own may have become. The refusal points at the backslash in `raw` where it can.
pub(super) fn refuse_decoded_backslashes(raw: &str, outcome: Outcome) -> Outcome {
    let decoded_again = outcome.edits.iter().any(|edit: &Edit| {
        matches!(
            edit.kind,
            EditKind::ForeignSyntax | EditKind::ParseStringified | EditKind::DoubleEncoded | EditKind::UnwrapEnvelope
        )
    });
    let Some(value) = outcome.input.as_ref().filter(|_| outcome.status == Status::Repaired && decoded_again) else {
        return outcome;
    };
    if !raw.contains('\\') {
        return outcome;
    }
    let Some(doubt) = doubt_in(value) else {
        return outcome;
    };
    let bytes = raw.as_bytes();
    let mut backslashes = memchr::memchr_iter(b'\\', bytes);
    let (message, at) = match doubt {
        Doubt::DriveLetter => (
            "a letter escape right after a drive letter in JSON read from inside the input: a path's backslash or an escape?",
            backslashes.find(|&at| after_drive_letter(bytes, at)),
        ),
        Doubt::RareControl => (
            "a \\b or \\f escape in JSON read from inside the input: the text's own backslash (a regex, LaTeX) or a control character?",
            backslashes.find(|&at| matches!(bytes.get(at + 1), Some(b'b' | b'f'))),
        ),
        Doubt::InsideWord => (
            "a letter escape inside a word, or starting one after a space or at the start, in JSON read from inside the input: a path's backslash, or a line break or tab?",
            backslashes.find(|&at| matches!(bytes.get(at + 1), Some(b'n' | b't' | b'r'))),
        ),
    };
    Outcome::refused(Refusal::new(RefusalCode::Ambiguous, message, at))
}

fn doubt_in(value: &Value) -> Option<Doubt> {
    match value {
        Value::String(text) => doubt_in_text(text),
        Value::Array(items) => items.iter().find_map(doubt_in),
        Value::Object(members) => members.iter().find_map(|(key, v)| doubt_in_text(key).or_else(|| doubt_in(v))),
        _ => None,
    }
}

fn doubt_in_text(text: &str) -> Option<Doubt> {
    let bytes = text.as_bytes();
    let word = |at: Option<&u8>| at.is_some_and(u8::is_ascii_alphanumeric);
    let controls = || (0..bytes.len()).filter(|&at| matches!(bytes[at], b'\n' | b'\t' | b'\r' | 0x08 | 0x0c));
    if controls().any(|at| after_drive_letter(bytes, at) && word(bytes.get(at + 1))) {
        return Some(Doubt::DriveLetter);
    }
    if bytes.iter().any(|&b| b == 0x08 || b == 0x0c) {
        return Some(Doubt::RareControl);
    }
    // The decoded text's line breaks and tabs are the escapes themselves: only a space ends a word.
    let spotted = controls().filter(|&at| text_starts_with_word(&bytes[at + 1..]));
    let letters = spotted.filter_map(|at| {
        let letter = match bytes[at] {
            b'\n' => b'n',
            b'\r' => b'r',
            _ => b't',
        };
        // A line break after a quote, `(` or `=` ends a line of code here (the text's own, or
        // a decoded one); a tab there is asked about as in a string read leniently.
        spot_after(text[..at].chars().next_back())
            .filter(|&spot| spot != EscapeSpot::AfterOpener || letter != b'n')
            .map(|spot| (at, letter, spot))
    });
    path_like_escape(text, letters, |b| b == b' ', b"\\", text.matches('\n').count() > 1).map(|_| Doubt::InsideWord)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repair::edit::Edit;
    use serde_json::json;

    #[test]
    fn a_decoded_backslash_of_the_texts_own_is_seen_and_code_is_not() {
        for (text, doubt) in [
            ("C:\new\tmp", Doubt::DriveLetter),
            ("cd D:\reports", Doubt::DriveLetter),
            ("\u{8}TODO\u{8}", Doubt::RareControl),
            ("$\u{c}rac{a}{b}$ and more", Doubt::RareControl),
            ("src\tests", Doubt::InsideWord),
            ("docs\new\readme.txt", Doubt::InsideWord),
            ("needs\triage", Doubt::InsideWord),
            ("cd src\tests", Doubt::InsideWord),
            ("cd ..\tests", Doubt::InsideWord),
            ("café\tables", Doubt::InsideWord),
            ("dir C:\\x\new", Doubt::InsideWord),
            ("cd \tests", Doubt::InsideWord),
            ("type \notes.txt", Doubt::InsideWord),
            ("cd \nginx", Doubt::InsideWord),
            ("set P=\tests", Doubt::InsideWord),
            ("\tests", Doubt::InsideWord),
        ] {
            assert_eq!(doubt_in_text(text), Some(doubt), "{text:?}");
        }
        for text in [
            "if x:\n    pass",
            "key: value\nnext",
            "C:\\new",
            "AC:\tx y",
            "all:\n\tgcc main.c\n",
            "line1\r\nline2",
            "one line\nand another",
            "line1\nline2",
            "\treturn nil",
            "two spaces  \nnext line\nand more",
        ] {
            assert_eq!(doubt_in_text(text), None, "{text:?}");
        }
    }

    #[test]
    fn only_a_repair_that_decoded_again_is_refused_and_the_refusal_says_where() {
        let raw = r#"<invoke name="S"><parameter name="paths">["C:\new"]</parameter></invoke>"#;
        let value = json!({"paths": ["C:\new"]});
        let foreign = vec![Edit::new(EditKind::ForeignSyntax, 0..raw.len(), "/paths")];
        let refused = refuse_decoded_backslashes(raw, Outcome::repaired(value.clone(), foreign.clone()));
        assert_eq!(refused.status, Status::Refused);
        assert_eq!(refused.reason.unwrap().position, Some(raw.find(":\\").unwrap() + 1));
        // The lenient parser asks this itself; an edit of its own is not a second decoding.
        let lenient = vec![Edit::new(EditKind::BareString, 0..raw.len(), "/paths/0")];
        let kept = refuse_decoded_backslashes(raw, Outcome::repaired(value, lenient));
        assert_eq!(kept.status, Status::Repaired);

        let raw = r#"<invoke name="S"><parameter name="paths">["\bx\b"]</parameter></invoke>"#;
        let refused = refuse_decoded_backslashes(raw, Outcome::repaired(json!({"paths": ["\u{8}x\u{8}"]}), foreign));
        assert_eq!(refused.reason.unwrap().position, raw.find("\\b"));
    }
}
