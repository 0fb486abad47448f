//! Chat templates' native call syntax around the input (round 15's foreign misses): gpt-oss's
//! harmony header (`<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>` …
//! `<|call|>`) and DeepSeek V3/V3.1's (`<｜tool▁call▁begin｜>…<｜tool▁sep｜>` …
//! `<｜tool▁call▁end｜>`) are wrappers when they name this tool once; and a special token that
//! ends such a wrapper ends an unquoted value whose root `}` was lost, rather than joining it.

mod grading;

use grading::grade_file;

#[test]
fn the_round15_native_syntax_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack15_native.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 32);
}
