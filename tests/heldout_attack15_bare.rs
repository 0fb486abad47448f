//! Bare runs with a second reading the parser does not walk (round 15): a declared key and a
//! value it takes ending the run with the colon lost, a written-out escape or a space outside
//! JSON's layout ending it, a call's closing tag ending it with the root `}` lost, a quoted
//! stretch glued to words that hides an item separator, a full-width comma or a paren group
//! without a comma where a list may stand — all refused; the controls beside them repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round15_bare_run_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack15_bare.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 45);
}
