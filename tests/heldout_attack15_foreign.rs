//! Foreign call syntax, round 15: a string parameter wholly inside a code fence is refused (the
//! fence may be markdown around it or the text's own); `<parameter name=K>` without quotes, an
//! OpenAI Responses `function_call` item and a one-call `tool_calls` list repair; two names on
//! one tag, a closing tag naming another key, two calls or keys beside `tool_calls` refuse.

mod grading;

use grading::grade_file;

#[test]
fn the_round15_foreign_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack15_foreign.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 13);
}
