//! Attack round 25 (realistic text, model-native call syntax): refused — unquoted text running
//! to the end of the input with nothing closed (its words may go on), a quoted stretch ending a
//! list item after words (`[npm ci "npm test"]`: an item whose comma was lost?), a member kept
//! in a nested object whose `}` may be lost that breaks the schema there, a foreign call's tag
//! for another declared key opened inside a string, a foreign call whose values carry Qwen's
//! edge line breaks in some values but not others, comment markers or a null-like word in a
//! foreign parameter's unquoted list, a call envelope of this tool as a string parameter's text,
//! and a `\t`/`\r` (or a `\n` before a file's name) after a space where the repair decodes it
//! (`cd \tests`). Controls with one reading still repair; trailing blanks stay layout (policy).

mod grading;

use grading::grade_file;

#[test]
fn the_round25_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack25.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 100);
}
