//! Grades the repair engine against the tool-call corpus: every result must equal one of the
//! case's accepted outcomes; a result that hands on an input no outcome allows is wrong.

use serde_json::Value;
use toolmend::repair::{repair, RepairOptions, Status};
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
    let options =
        RepairOptions { stop_reason: case["stop_reason"].as_str().map(String::from), ..RepairOptions::default() };
    let outcome = repair(case["raw"].as_str().unwrap(), Some(&schema), &options);
    let accepted = case["accept"].as_array().unwrap();
    let matches = accepted.iter().any(|a| {
        a["status"].as_str() == Some(outcome.status.as_str())
            && (outcome.status == Status::Refused || a.get("input") == outcome.input.as_ref())
    });
    let detail = format!("{} -> {} {:?} {:?}", case["id"], outcome.status.as_str(), outcome.input, outcome.reason);
    let graded = if matches {
        Grade::Right
    } else if outcome.status == Status::Refused {
        Grade::Missed
    } else {
        Grade::Wrong
    };
    (graded, detail)
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

#[test]
fn shared_corpus_has_no_wrong_repairs_and_nearly_all_right() {
    let report = grade_file(include_str!("../fixtures/corpus/toolcalls.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.right >= 40, "only {} right; missed: {:#?}", report.right, report.missed);
}

/// The project's own cases of the same kinds, each outcome a deliberate choice.
#[test]
fn own_cases_all_right() {
    let report = grade_file(include_str!("../fixtures/repair/cases.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
}
