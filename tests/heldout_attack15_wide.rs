//! Full-width commas after a scalar or inside a bare run (round 15): `30，"command"："ls"` ends
//! the number, and a bare run ends at a wide comma only before a quoted key the object takes;
//! anywhere else the comma is the text's own (CJK prose keeps it, also before the closer).

mod grading;

use grading::grade_file;

#[test]
fn the_round15_wide_comma_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack15_wide.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 15);
}
