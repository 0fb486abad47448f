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
    let options = RepairOptions {
        stop_reason: case["stop_reason"].as_str().map(String::from),
        ..RepairOptions::default()
    };
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

#[test]
fn corpus_has_no_wrong_repairs_and_nearly_all_right() {
    let text = include_str!("../fixtures/corpus/toolcalls.jsonl");
    let cases: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut wrong = Vec::new();
    let mut missed = Vec::new();
    for case in &cases {
        match grade(case) {
            (Grade::Right, _) => {}
            (Grade::Missed, detail) => missed.push(detail),
            (Grade::Wrong, detail) => wrong.push(detail),
        }
    }
    let right = cases.len() - wrong.len() - missed.len();
    eprintln!("corpus: {right} right, {} missed, {} wrong of {}", missed.len(), wrong.len(), cases.len());
    assert!(wrong.is_empty(), "wrong repairs: {wrong:#?}");
    assert!(right >= 40, "only {right} right; missed: {missed:#?}");
}
