//! Attack round 17 (call syntaxes and wrappers): a comma between digits where a list may stand
//! (`1,000`, `3,5`, `$1,000,000`: a numeral's own, or a separator?) and a string parameter
//! holding a JSON object of the tool's own keys are refused; a gpt-oss analysis message before
//! the harmony call and bracketed unquoted lists in parameters repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round17_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack17.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 16);
}
