//! Attack round 26 (round 25's rules attacked; schema shapes and coercions): refused — a quoted
//! stretch ending a list item past a line break, a wide blank or another stretch; `nil`/`NULL`
//! and a `#` word at list positions; a letter escape right after a space, `=`, a quote or `(`
//! (`cd \nginx`), or at a one-word string's start (`"\tests"`); a member kept in a nested
//! object breaking its schema there by value or by key, with any object of the last run of
//! closers the one that may have lost its `}`; a longer closing fence's leftover backticks, or a
//! fence after text that opened one of its own; a key-shaped line inside a heredoc's body; a
//! number a double cannot hold in JSON decoded a second time; `\a`, `\v` and octal escapes in
//! single-quoted strings and `\v`, `\0`, `\x` in JSON5; call tags in a double-encoded input.
//! Controls with one reading still repair; a fence the wrapper opened closes the text (policy).

mod grading;

use grading::grade_file;

#[test]
fn the_round26_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack26.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 98);
}
