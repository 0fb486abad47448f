//! Attack round 11 on the lenient parser (fixtures/heldout/attack11_lenient.jsonl): text with a
//! second reading the parser did not walk — two strings with the comma between them lost, a
//! hole in an array, typographic quotes as delimiters, quotes doubled inside a string,
//! separator-ambiguous or non-JSON numerals, Python escapes, commas inside quoted siblings —
//! is refused (or handed on unchanged); the controls beside them still repair. No wrong repair.

mod grading;

use grading::grade_file;
use serde_json::Value;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[test]
fn attack11_lenient_cases_have_no_wrong_repairs_and_none_missed() {
    let report = grade_file(include_str!("../fixtures/heldout/attack11_lenient.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 50);
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
