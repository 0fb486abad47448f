//! The held-out and corpus grader shared by the test files: a case's result must equal one of
//! its accepted outcomes; a result that hands on an input no outcome allows is wrong.
#![allow(dead_code)]

use serde_json::Value;
use toolmend::repair::{parse_as_cli, repair, Outcome, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[derive(Debug, PartialEq)]
pub enum Grade {
    Right,
    /// Refused where a repair was expected: safe, but a miss.
    Missed,
    /// Handed on an input nobody meant.
    Wrong,
}

pub fn grade(case: &Value) -> (Grade, String) {
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
pub fn accepts(accepted: &Value, outcome: &Outcome, raw: &str) -> bool {
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

pub struct Report {
    pub right: usize,
    pub missed: Vec<String>,
    pub wrong: Vec<String>,
}

pub fn grade_file(text: &str) -> Report {
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
