//! Attack round 16's wrong repairs: apostrophes read as a single-quoted stretch that hides an
//! item separator, typographic quotes or backticks split at the comma inside them, a list over
//! lines read as one item, an item holding the array's own closer, a stray closer after the
//! object where an inner one may have closed early, and `\/` decoded beside backslashes that
//! escape nothing — all refused; controls beside them repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round16_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack16.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 38);
}
