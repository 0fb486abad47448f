//! The second round-14 attack on the foreign readings (/work/attack14/xml2): an envelope's
//! input taken off without the leaked-tag check, an envelope with a key beside it (also inside
//! another envelope), a question as a lead-in, leaked tags the JSON check did not read
//! (`name=K`, `NAME=`, curly quotes, blanks, another case, a schema whose keys are unknown),
//! tags in another case or with blanks, other syntaxes' markers and a turn's end token inside
//! a value, and envelope keys declared in one branch of a union. All 33 are refused or left
//! invalid now.

mod grading;

use grading::grade_file;

#[test]
fn the_round_14_second_foreign_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack14_foreign2.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 33);
}
