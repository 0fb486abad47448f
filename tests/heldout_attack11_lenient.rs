//! Attack round 11 on the lenient parser (fixtures/heldout/attack11_lenient.jsonl): text with a
//! second reading the parser did not walk — two strings with the comma between them lost, a
//! hole in an array, typographic quotes as delimiters, quotes doubled inside a string,
//! separator-ambiguous or non-JSON numerals, Python escapes, commas inside quoted siblings —
//! is refused (or handed on unchanged); the controls beside them still repair. No wrong repair.

use serde_json::Value;
use toolmend::repair::{parse_as_cli, repair, Outcome, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[derive(Debug, PartialEq)]
enum Grade {
    Right,
    /// Refused or unchanged where a repair was expected: safe, but a miss.
    Missed,
    /// Handed on an input nobody meant.
    Wrong,
}

fn grade(case: &Value) -> (Grade, String) {
    let schema = ToolSchema::compile(&case["schema"]).expect("schemas compile");
    let options = RepairOptions {
        stop_reason: case["stop_reason"].as_str().map(String::from),
        tool: case["tool"].as_str().map(String::from),
        declared_len: case["len"].as_u64().map(|len| len as usize),
        ..RepairOptions::default()
    };
    let raw = case["raw"].as_str().unwrap();
    let outcome = repair(raw, Some(&schema), &options);
    let matches = case["accept"].as_array().unwrap().iter().any(|a| accepts(a, &outcome, raw));
    let detail = format!("{} -> {} {:?} {:?}", case["id"], outcome.status.as_str(), outcome.input, outcome.reason);
    let graded = if matches {
        Grade::Right
    } else if outcome.status == Status::Refused || outcome.status == Status::Invalid {
        Grade::Missed
    } else {
        Grade::Wrong
    };
    (graded, detail)
}

/// As tests/corpus.rs: `valid` and `invalid` both hand the input on unchanged; an accepted
/// outcome without an `input` means the parse of the raw text.
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

#[test]
fn attack11_lenient_cases_have_no_wrong_repairs_and_none_missed() {
    let (mut right, mut missed, mut wrong) = (0, Vec::new(), Vec::new());
    for line in include_str!("../fixtures/heldout/attack11_lenient.jsonl").lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        match grade(&case) {
            (Grade::Right, _) => right += 1,
            (Grade::Missed, detail) => missed.push(detail),
            (Grade::Wrong, detail) => wrong.push(detail),
        }
    }
    eprintln!("{right} right, {} missed, {} wrong", missed.len(), wrong.len());
    assert!(wrong.is_empty(), "wrong repairs: {wrong:#?}");
    assert!(missed.is_empty(), "missed: {missed:#?}");
    assert_eq!(right, 50);
}

/// Each family's refusal names its own reason, so a refusal for some other cause (a parse
/// that fails anyway) would not pass for the mechanism.
#[test]
fn each_family_is_refused_for_its_own_reason() {
    let cases = [
        ("comma-000", "quotes doubled"),
        ("dq-000", "quotes doubled"),
        ("comma-012", "comma between them lost"),
        ("comma-014", "comma between them lost"),
        ("fz2-00679", "comma between them lost"),
        ("comma-009", "hole"),
        ("comma-011", "hole"),
        ("smart-000", "typographic quotes"),
        ("smart-016", "typographic quotes"),
        ("coerce-053", "spells a number"),
        ("pyesc-013", "Python escape"),
        ("arr-001", "holds a comma"),
    ];
    let by_id: Vec<Value> = include_str!("../fixtures/heldout/attack11_lenient.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for (id, reason) in cases {
        let case = by_id.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id} in the file"));
        let schema = ToolSchema::compile(&case["schema"]).unwrap();
        let outcome = repair(case["raw"].as_str().unwrap(), Some(&schema), &RepairOptions::default());
        let message = outcome.reason.as_ref().map(|r| r.message.clone()).unwrap_or_default();
        assert_eq!(outcome.status, Status::Refused, "{id}");
        assert!(message.contains(reason), "{id}: {message}");
    }
}
