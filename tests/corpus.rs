//! Grades the repair engine against the tool-call corpus: every result must equal one of the
//! case's accepted outcomes; a result that hands on an input no outcome allows is wrong.

use serde_json::Value;
use toolmend::repair::{parse_as_cli, repair, Outcome, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[derive(Debug, PartialEq)]
enum Grade {
    Right,
    /// Refused where a repair was expected: safe, but a miss.
    Missed,
    /// Handed on an input nobody meant.
    Wrong,
}

fn grade(case: &Value) -> (Grade, String) {
    let schema = ToolSchema::compile(&case["schema"]).expect("corpus schemas compile");
    let options = RepairOptions {
        stop_reason: case["stop_reason"].as_str().map(String::from),
        tool: case["tool"].as_str().map(String::from),
        // A recorded prefix: the input's full length, as the CLI's `__unparsedToolInput.len`.
        declared_len: case["len"].as_u64().map(|len| len as usize),
        ..RepairOptions::default()
    };
    let outcome = repair(case["raw"].as_str().unwrap(), Some(&schema), &options);
    let accepted = case["accept"].as_array().unwrap();
    let raw = case["raw"].as_str().unwrap();
    let matches = accepted.iter().any(|a| accepts(a, &outcome, raw));
    let detail = format!("{} -> {} {:?} {:?}", case["id"], outcome.status.as_str(), outcome.input, outcome.reason);
    let graded = if matches {
        Grade::Right
    } else if outcome.status == Status::Refused || outcome.status == Status::Invalid {
        // Handed on unchanged: the tool sees what the model sent, a miss at worst.
        Grade::Missed
    } else {
        Grade::Wrong
    };
    (graded, detail)
}

/// Whether one accepted outcome allows `outcome`. `valid` and `invalid` both hand the input on
/// unchanged, so either accepts the other; an accepted one without an `input` means the parse
/// of the raw text.
fn accepts(accepted: &Value, outcome: &Outcome, raw: &str) -> bool {
    let unchanged = |status: &str| status == "valid" || status == "invalid";
    let status = accepted["status"].as_str().unwrap_or_default();
    let same_status = status == outcome.status.as_str() || (unchanged(status) && unchanged(outcome.status.as_str()));
    if !same_status {
        return false;
    }
    if outcome.status == Status::Refused {
        return true;
    }
    match accepted.get("input") {
        Some(input) => Some(input) == outcome.input.as_ref(),
        None => unchanged(status) && parse_as_cli(raw).as_ref() == outcome.input.as_ref(),
    }
}

struct Report {
    right: usize,
    missed: Vec<String>,
    wrong: Vec<String>,
}

fn grade_file(text: &str) -> Report {
    let mut report = Report { right: 0, missed: Vec::new(), wrong: Vec::new() };
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        match grade(&case) {
            (Grade::Right, _) => report.right += 1,
            (Grade::Missed, detail) => report.missed.push(detail),
            (Grade::Wrong, detail) => report.wrong.push(detail),
        }
    }
    eprintln!("{} right, {} missed, {} wrong", report.right, report.missed.len(), report.wrong.len());
    for detail in report.missed.iter().chain(&report.wrong) {
        eprintln!("  {detail}");
    }
    report
}

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
