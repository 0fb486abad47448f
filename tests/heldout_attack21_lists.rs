//! Attack round 21 (bare lists of shell commands): refused — a single-quoted shell word glued
//! after a sign (`CFLAGS='-O2, -g'`) or a backtick pair holding the comma an unbracketed list
//! splits on. Controls whose quotes hold no comma, or whose comma sits in parens, still repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round21_list_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack21_lists.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 9);
}
