//! The round-14 attack on key shapes (/work/attack14/keys): a member's shape at the very start
//! of a bare value (`"new_string": replace_all: true`, `"path": path_glob: "src/**"`), a lost
//! nested `}` under a top level that takes undeclared members, an undeclared quoted name inside
//! a bare run under an open schema — each refused now — and four keys with one reading that
//! were refused (`"timeout:" 30`, `"timeout"30`, `'command":`, `timeout=30`), repaired now.
//! Ten controls stay right (the full-width cases are graded in heldout_attack14_wide.rs).

mod grading;

use grading::grade_file;

#[test]
fn the_round_14_key_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack14_keys.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 21);
}
