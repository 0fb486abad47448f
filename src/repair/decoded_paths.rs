//! A repair that decoded JSON a second time (a parameter of foreign call syntax holding JSON, a
//! string holding JSON, a double-encoded input, an envelope's `arguments` string) may have read
//! a Windows path's backslash as an escape: `["C:\new\tmp"]` gives "C:⏎ew⇥mp". The lenient
//! parser refuses `"C:\new"` where it reads it; this is the same question asked of the result.

use super::edit::{Edit, EditKind};
use super::lexeme::after_drive_letter;
use super::outcome::{Outcome, Refusal, RefusalCode, Status};
use serde_json::Value;

/// A repaired outcome refused when its decoding gave a control character right after a drive
/// letter and before a letter or digit (`C:` `\n` `ew`): a path's backslash, or an escape?
/// The refusal points at the first drive letter's backslash in `raw`.
pub(super) fn refuse_decoded_drive_letter(raw: &str, outcome: Outcome) -> Outcome {
    let decoded_again = outcome.edits.iter().any(|edit: &Edit| {
        matches!(
            edit.kind,
            EditKind::ForeignSyntax | EditKind::ParseStringified | EditKind::DoubleEncoded | EditKind::UnwrapEnvelope
        )
    });
    let Some(value) = outcome.input.as_ref().filter(|_| outcome.status == Status::Repaired && decoded_again) else {
        return outcome;
    };
    let bytes = raw.as_bytes();
    let Some(at) = memchr::memchr_iter(b'\\', bytes).find(|&at| after_drive_letter(bytes, at)) else {
        return outcome;
    };
    if !holds_decoded_drive_letter(value) {
        return outcome;
    }
    Outcome::refused(Refusal::new(
        RefusalCode::Ambiguous,
        "a letter escape right after a drive letter in JSON read from inside the input: a path's backslash or an escape?",
        Some(at),
    ))
}

fn holds_decoded_drive_letter(value: &Value) -> bool {
    match value {
        Value::String(text) => drive_letter_then_control(text),
        Value::Array(items) => items.iter().any(holds_decoded_drive_letter),
        Value::Object(members) => {
            members.iter().any(|(key, v)| drive_letter_then_control(key) || holds_decoded_drive_letter(v))
        }
        _ => false,
    }
}

/// `C:` at a word start, then `\n`, `\t`, `\r`, backspace or form feed, then a letter or digit.
fn drive_letter_then_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|at| {
        matches!(bytes[at], b'\n' | b'\t' | b'\r' | 0x08 | 0x0c)
            && after_drive_letter(bytes, at)
            && bytes.get(at + 1).is_some_and(u8::is_ascii_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repair::edit::Edit;
    use serde_json::json;

    #[test]
    fn a_decoded_path_is_seen_and_code_is_not() {
        assert!(drive_letter_then_control("C:\new\tmp"));
        assert!(drive_letter_then_control("cd D:\reports"));
        assert!(!drive_letter_then_control("if x:\n    pass"));
        assert!(!drive_letter_then_control("key: value\nnext"));
        assert!(!drive_letter_then_control("C:\\new"));
        assert!(!drive_letter_then_control("AC:\new"));
    }

    #[test]
    fn only_a_repair_that_decoded_again_is_refused_and_the_refusal_says_where() {
        let raw = r#"<invoke name="S"><parameter name="paths">["C:\new"]</parameter></invoke>"#;
        let value = json!({"paths": ["C:\new"]});
        let foreign = vec![Edit::new(EditKind::ForeignSyntax, 0..raw.len(), "/paths")];
        let refused = refuse_decoded_drive_letter(raw, Outcome::repaired(value.clone(), foreign));
        assert_eq!(refused.status, Status::Refused);
        assert_eq!(refused.reason.unwrap().position, Some(raw.find(":\\").unwrap() + 1));
        // The lenient parser asks this itself; an edit of its own is not a second decoding.
        let lenient = vec![Edit::new(EditKind::BareString, 0..raw.len(), "/paths/0")];
        let kept = refuse_decoded_drive_letter(raw, Outcome::repaired(value, lenient));
        assert_eq!(kept.status, Status::Repaired);
    }
}
