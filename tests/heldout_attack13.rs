//! The round-13 attack on round 12's new readings (/work/attack13): an envelope unwrapped where
//! the schema declares `name` or the input key as its own parameters, an MCP short name taken
//! from any name holding `__`, Python's `True`/`None` read only as the literal where the schema
//! also takes the word, a CDATA section at a value's edge with markup beside it, and item schemas
//! under `prefixItems`, a draft-07 tuple `items` or `contains` that the parse did not see. Each
//! is refused or left invalid now; four controls still repair.

mod grading;

use grading::grade_file;

#[test]
fn the_round_13_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack13.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 14);
}
