//! A repair that decoded JSON a second time (a parameter of foreign call syntax holding JSON, a
//! string holding JSON, a double-encoded input, an envelope's `arguments` string) may have read
//! a Windows path's backslash as an escape: `["C:\new\tmp"]` gives "C:⏎ew⇥mp". The lenient
//! parser refuses `"C:\new"` where it reads it; this is the same question asked of the result.

use super::edit::{Edit, EditKind};
use super::outcome::{Refusal, RefusalCode};
use serde_json::Value;

/// Refuses a repair whose decoding gave a control character right after a drive letter and
/// before a letter or digit (`C:` `\n` `ew`): a path's backslash, or an escape?
pub(super) fn refuse_decoded_drive_letter(raw: &str, value: &Value, edits: &[Edit]) -> Result<(), Refusal> {
    let decoded_again = edits.iter().any(|edit| {
        matches!(
            edit.kind,
            EditKind::ForeignSyntax | EditKind::ParseStringified | EditKind::DoubleEncoded | EditKind::UnwrapEnvelope
        )
    });
    if !decoded_again || !raw.contains(":\\") || !holds_decoded_drive_letter(value) {
        return Ok(());
    }
    Err(Refusal::new(
        RefusalCode::Ambiguous,
        "a letter escape right after a drive letter in JSON read from inside the input: a path's backslash or an escape?",
        None,
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
    bytes.windows(4).enumerate().any(|(at, w)| {
        w[0].is_ascii_alphabetic()
            && w[1] == b':'
            && matches!(w[2], b'\n' | b'\t' | b'\r' | 0x08 | 0x0c)
            && w[3].is_ascii_alphanumeric()
            && (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::drive_letter_then_control;

    #[test]
    fn a_decoded_path_is_seen_and_code_is_not() {
        assert!(drive_letter_then_control("C:\new\tmp"));
        assert!(drive_letter_then_control("cd D:\reports"));
        assert!(!drive_letter_then_control("if x:\n    pass"));
        assert!(!drive_letter_then_control("key: value\nnext"));
        assert!(!drive_letter_then_control("C:\\new"));
    }
}
