//! The 429 schema-free cases from the jsonrepair test suite (ISC licence, see
//! fixtures/corpus/jsonrepair-LICENSE.md). Agreement is informative: a refusal is acceptable, a
//! panic is not, and every case where toolmend hands on something different from jsonrepair is
//! listed, with why, in fixtures/repair/jsonrepair-differ.jsonl.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use toolmend::repair::{repair, RepairOptions, Status};

fn classify(case: &Value) -> (&'static str, Option<Value>) {
    let input = case["input"].as_str().unwrap();
    let outcome = repair(input, None, &RepairOptions::default());
    if outcome.status == Status::Refused {
        return ("refuse", None);
    }
    let theirs = case["expected"].as_str().and_then(|e| serde_json::from_str::<Value>(e).ok());
    if theirs.as_ref() == outcome.input.as_ref() {
        ("agree", outcome.input)
    } else {
        ("differ", outcome.input)
    }
}

#[test]
fn jsonrepair_cases_never_panic_and_every_difference_is_reviewed() {
    let cases: Vec<Value> = include_str!("../fixtures/corpus/jsonrepair-cases.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reviewed: BTreeMap<String, Value> = include_str!("../fixtures/repair/jsonrepair-differ.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["input"].as_str().unwrap().to_string(), r))
        .collect();
    let mut counts = BTreeMap::new();
    let mut unreviewed = Vec::new();
    for case in &cases {
        let (class, ours) = classify(case);
        *counts.entry(class).or_insert(0) += 1;
        if class != "differ" {
            continue;
        }
        let input = case["input"].as_str().unwrap();
        match reviewed.get(input) {
            Some(review) if review["ours"] == ours.clone().unwrap_or(Value::Null) => {}
            _ => unreviewed.push(json!({"input": input, "ours": ours, "theirs": case["expected"], "why": ""})),
        }
    }
    eprintln!("jsonrepair cases: {counts:?}");
    if !unreviewed.is_empty() {
        let listing: Vec<String> = unreviewed.iter().map(Value::to_string).collect();
        panic!("{} differences not reviewed:\n{}", unreviewed.len(), listing.join("\n"));
    }
}
