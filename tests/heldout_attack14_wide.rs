//! Full-width punctuation (attack round 14): a CJK input method's colon and comma read as JSON's
//! between members and items, and what that reading must not do — a string read across a wide
//! comma before a key, a doubled or stray separator after a key taken as the value's text, an
//! unquoted item swallowing the quoted items after a wide comma (or `[1，2]` kept as one text).
//! The lead's ten cases and the bare-value attack's thirteen wrong repairs and one miss.

mod grading;

use grading::grade_file;

#[test]
fn the_wide_punctuation_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack14_wide.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 24);
}
