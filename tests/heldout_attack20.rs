//! Attack round 20 (realistic text and model-native call syntax): refused — JSON decoded a
//! second time (a foreign parameter, a string holding JSON, a double-encoded input) that turns a
//! Windows path's backslash into a control character; another syntax's closing tag or end token
//! (`<|im_end|>`, `</s>`), a code fence's line, or a tag the text itself opens ending unquoted
//! text inside a wrapper with the object's `}` lost; a `{` in text whose `}` may be an
//! enclosing object's; a single quote glued after a sign holding a list comma; the list comma of
//! another script (`、`, `،`). Five controls with one reading still repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round20_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack20.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 83);
}
