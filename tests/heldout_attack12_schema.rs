//! The round-12 attack's wrong repairs in schema shapes and number coercion (/work/attack12):
//! names declared through composition (`allOf` parts, `properties` beside an `anyOf`/`oneOf`
//! list of `required`, `$ref`s, nested objects) that the parse did not see; numeric strings
//! coerced to numbers the CLI's doubles cannot hold; `600.000` in a foreign parameter read as
//! 600.0. Graded as tests/corpus.rs grades its files, then each composed schema against its flat
//! twin: the same input must come out the same.

mod grading;

use grading::grade_file;
use serde_json::{json, Value};
use toolmend::repair::{repair, Outcome, RepairOptions};
use toolmend::schema::ToolSchema;

#[test]
fn the_attacks_schema_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack12_schema.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 36);
}

fn outcome_of(schema: &Value, raw: &str) -> Outcome {
    let schema = ToolSchema::compile(schema).unwrap();
    let options = RepairOptions {
        stop_reason: Some("tool_use".into()),
        tool: Some("run_job".into()),
        ..RepairOptions::default()
    };
    repair(raw, Some(&schema), &options)
}

/// What a caller can tell apart: the status, the input handed on, and why it was refused.
fn seen(outcome: &Outcome) -> (String, Option<Value>, Option<String>) {
    let code = outcome.reason.as_ref().map(|r| r.code.as_str().to_string());
    (outcome.status.as_str().to_string(), outcome.input.clone(), code)
}

const INPUTS: [&str; 9] = [
    r#"{"command": terraform apply -auto-approve; dry_run: true}"#,
    r#"{"command": terraform apply -auto-approve && dry_run: true}"#,
    r#"{"command": terraform apply -auto-approve | dry_run: true}"#,
    "{\"command\": terraform apply\ndry_run: true}",
    r#"{"command": ls -la, "dry_run": true}"#,
    r#"{"command": ls, "timeout": "5000"}"#,
    r#"{"command": "ls", "timeout": "5000"}"#,
    r#"{"command": echo a: b}"#,
    r#"{command: make, dry_run: yes}"#,
];

fn properties() -> Value {
    json!({"command": {"type": "string"}, "dry_run": {"type": "boolean"}, "timeout": {"type": "integer"}})
}

/// Pairs of (composed, flat) schemas that declare the same names, types and closedness.
fn twins() -> Vec<(&'static str, Value, Value)> {
    let flat = |closed: bool| {
        let mut schema = json!({"type": "object", "properties": properties(), "required": ["command"]});
        if closed {
            schema["additionalProperties"] = json!(false);
        }
        schema
    };
    let split = json!([
        {"properties": {"command": {"type": "string"}}, "required": ["command"]},
        {"properties": {"dry_run": {"type": "boolean"}, "timeout": {"type": "integer"}}}
    ]);
    let defs = json!({
        "base": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        "flags": {"properties": {"dry_run": {"type": "boolean"}, "timeout": {"type": "integer"}}}
    });
    let by_ref = json!([{"$ref": "#/$defs/base"}, {"$ref": "#/$defs/flags"}]);
    vec![
        ("allOf parts", json!({"type": "object", "allOf": split}), flat(false)),
        (
            "allOf parts, unevaluatedProperties",
            json!({"type": "object", "allOf": split, "unevaluatedProperties": false}),
            flat(true),
        ),
        ("allOf of $refs", json!({"type": "object", "allOf": by_ref, "$defs": defs}), flat(false)),
        (
            "allOf of $refs, unevaluatedProperties",
            json!({"type": "object", "allOf": by_ref, "$defs": defs, "unevaluatedProperties": false}),
            flat(true),
        ),
        (
            "properties beside anyOf of required, closed",
            json!({"type": "object", "properties": properties(), "additionalProperties": false,
                   "anyOf": [{"required": ["command"]}, {"required": ["command", "dry_run"]}]}),
            flat(true),
        ),
        (
            "properties beside oneOf of required, open",
            json!({"type": "object", "properties": properties(), "oneOf": [{"required": ["command"]}]}),
            flat(false),
        ),
        (
            "a root $ref to properties beside oneOf",
            json!({"$ref": "#/$defs/job", "$defs": {"job": {"type": "object", "properties": properties(),
                   "additionalProperties": false, "oneOf": [{"required": ["command"]}]}}}),
            flat(true),
        ),
    ]
}

#[test]
fn each_composed_schema_reads_every_input_as_its_flat_twin_does() {
    for (name, composed, flat) in twins() {
        for raw in INPUTS {
            let (composed_outcome, flat_outcome) = (outcome_of(&composed, raw), outcome_of(&flat, raw));
            assert_eq!(seen(&composed_outcome), seen(&flat_outcome), "{name}: {raw:?}");
        }
    }
}

#[test]
fn nested_composed_objects_read_as_nested_flat_ones() {
    let wrap = |inner: Value| json!({"type": "object", "properties": {"job": inner}, "required": ["job"]});
    for (name, composed, flat) in twins() {
        // A nested `$ref` must point from the root: keep the `$defs` there.
        let mut composed_nested = wrap(composed.clone());
        if let Some(defs) = composed.get("$defs") {
            composed_nested["$defs"] = defs.clone();
        }
        for raw in INPUTS {
            let raw = format!("{{\"job\": {raw}}}");
            let composed_outcome = outcome_of(&composed_nested, &raw);
            let flat_outcome = outcome_of(&wrap(flat.clone()), &raw);
            assert_eq!(seen(&composed_outcome), seen(&flat_outcome), "{name}: {raw:?}");
        }
    }
}

#[test]
fn the_attacks_composed_cases_refuse_and_their_flat_twins_refuse_too() {
    let raw = r#"{"command": terraform apply -auto-approve; dry_run: true}"#;
    for (name, composed, flat) in twins() {
        assert_eq!(outcome_of(&composed, raw).status.as_str(), "refused", "{name}");
        assert_eq!(outcome_of(&flat, raw).status.as_str(), "refused", "{name}: flat");
    }
}

/// Two alternatives that type `n` differently (`first`, then `second`).
fn alternatives(first: Value, second: Value) -> Value {
    let branch = |n: &Value| json!({"properties": {"c": {"type": "string"}, "n": n}, "required": ["c"], "additionalProperties": false});
    json!({"type": "object", "anyOf": [branch(&first), branch(&second)]})
}

#[test]
fn a_name_typed_differently_in_two_branches_reads_the_same_in_either_order() {
    // Once the first branch's type alone guided the parse: `a, b` for integer-or-string was a
    // syntax error, for string-or-integer the text "a, b".
    let types = [
        json!({"type": "integer"}),
        json!({"type": "string"}),
        json!({"type": "array", "items": {"type": "string"}}),
        json!({"type": "object", "properties": {"x": {"type": "string"}}}),
    ];
    let raws = [
        r#"{"c": "x", "n": a, b}"#,
        r#"{"c": "x", "n": hello world}"#,
        "{\"c\": \"x\", \"n\": a\nb}",
        r#"{"c": "x", "n": {x: 1}}"#,
        r#"{"c": "x", "n": [a, b]}"#,
        r#"{"c": "x", "n": 5, 6}"#,
        r#"{"c": "x", "n": "5"}"#,
    ];
    for (i, first) in types.iter().enumerate() {
        for second in &types[i + 1..] {
            let (one, other) =
                (alternatives(first.clone(), second.clone()), alternatives(second.clone(), first.clone()));
            for raw in raws {
                let (a, b) = (outcome_of(&one, raw), outcome_of(&other, raw));
                assert_eq!((a.status, &a.input), (b.status, &b.input), "{first} / {second}: {raw:?}");
            }
        }
    }
    let outcome = outcome_of(&alternatives(types[0].clone(), types[1].clone()), r#"{"c": "x", "n": a, b}"#);
    assert_eq!(outcome.input, Some(json!({"c": "x", "n": "a, b"})), "{:?}", outcome.reason);
}
