//! Grades the repair engine against the tool-call corpus: every result must equal one of the
//! case's accepted outcomes; a result that hands on an input no outcome allows is wrong.

mod grading;

use grading::grade_file;
use serde_json::Value;

/// The failure families real models produce (foreign syntax, damaged keys, restarts, coercions).
#[test]
fn families_corpus_has_no_wrong_repairs_and_nearly_all_right() {
    let report = grade_file(include_str!("../fixtures/corpus/toolcalls-families.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.right >= 30, "only {} right; missed: {:#?}", report.right, report.missed);
}

/// Malformed inputs real models produced, from public bug reports (fixtures/realworld/README.md).
#[test]
fn realworld_corpus_has_no_wrong_repairs() {
    let report = grade_file(include_str!("../fixtures/realworld/cases.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.right >= 45, "only {} right; missed: {:#?}", report.right, report.missed);
}

/// Shared-corpus cases written before the rule they contradict: each id, the input toolmend
/// hands on instead, and why. `valid-stringified` predates the lossless coercions (a string
/// holding JSON of the wanted type is read as that value), which the families corpus and the
/// engine's design require.
const SUPERSEDED: [(&str, &str); 1] = [("valid-stringified", r#"{"market":"us","keywords":["a"]}"#)];

#[test]
fn shared_corpus_has_no_wrong_repairs_and_nearly_all_right() {
    let report = grade_file(include_str!("../fixtures/corpus/toolcalls.jsonl"));
    let superseded: Vec<String> = SUPERSEDED
        .iter()
        .map(|(id, input)| format!("\"{id}\" -> repaired Some({:?})", serde_json::from_str::<Value>(input).unwrap()))
        .collect();
    let wrong: Vec<&String> =
        report.wrong.iter().filter(|w| !superseded.iter().any(|s| w.starts_with(s.as_str()))).collect();
    assert_eq!(report.wrong.len() - wrong.len(), SUPERSEDED.len(), "superseded cases: {:#?}", report.wrong);
    assert!(wrong.is_empty(), "wrong repairs: {wrong:#?}");
    assert!(report.right >= 40, "only {} right; missed: {:#?}", report.right, report.missed);
}

/// The project's own cases of the same kinds, each outcome a deliberate choice.
#[test]
fn own_cases_all_right() {
    let report = grade_file(include_str!("../fixtures/repair/cases.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
}

/// A held-out set written after the engine (round 10: realistic text in bare values, many
/// models' call syntaxes, damaged keys, adversarial text; 410 cases): no wrong repair, and no
/// fewer right than now (371 when it was written; 376 once undeclared key shapes inside a
/// string's own braces or mid-line stopped blocking the repair).
#[test]
fn heldout_round10_has_no_wrong_repairs() {
    let report = grade_file(include_str!("../fixtures/heldout/round10.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.right >= 376, "only {} right; missed: {:#?}", report.right, report.missed);
}
