//! Attack round 24 (today's rules attacked): refused — a relative path's backslash after `.`,
//! `..`, `~`, `%VAR%` or `${x}` (`cd ..\tests`), a `\n` in a word whose rest names a file
//! (`src\notes.md:12`) or that keeps a backslash of its own, a tab between letters of any script
//! in JSON decoded a second time, a lost `}` before `, {` with two arrays open (the next item is
//! the inner array's or the outer one's), a shell's escaped comma or a generic's angle brackets
//! around a list comma. Controls with one reading still repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round24_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack24.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 47);
}
