//! Attack round 27 (rounds 25–26's rules attacked; long realistic values with one damage):
//! refused — heredocs spelled `<<\EOF`, `<<$'EOF'`, `<<"$END"` and their terminators matched as
//! bash matches them (exactly; after tabs only for `<<-`), a key-shaped line inside a shell
//! single-quoted string over lines, a nested object's lost `}` inside array items and before
//! closers with commas or comments between, an escape Python reads (`\a`, octal, `\N{…}`) in a
//! double-quoted string of a document in Python's syntax, and a bare value's trailing line break
//! before a key whose comma was lost (a file's last line break). Controls still repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round27_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack27.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 59);
}
