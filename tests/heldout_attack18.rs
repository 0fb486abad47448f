//! Attack round 18 (realistic text in unquoted values) and the recall check beside it: a comma
//! that ends unquoted text before a closer or the input's end (`paste -sd,}`, `Dear Bob,}`) is
//! a trailing comma or the text's own — refused; a quoted string in parentheses where a list
//! stands is that string, and a trailing ideographic space is layout — repaired.

mod grading;

use grading::grade_file;

#[test]
fn the_round18_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack18.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 19);
}
