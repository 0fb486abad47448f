//! Properties of the repair ladder that hold for any input.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolmend::repair::{is_valid_for_cli, parse_as_cli, repair, RefusalCode, RepairOptions, Status};
use toolmend::schema::ToolSchema;

fn note_schema() -> ToolSchema {
    ToolSchema::compile(&json!({
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "body": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "pinned": {"type": "boolean"},
            "count": {"type": "integer"}
        },
        "required": ["title", "body"],
        "additionalProperties": false
    }))
    .unwrap()
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z\"\\\\ ]{0,6}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Inputs that fit the note schema, as text.
fn note_object() -> impl Strategy<Value = Value> {
    (
        "[a-zA-Z \"',:{}]{0,16}",
        "[a-zA-Z \"',:\\\\\n]{0,24}",
        prop::option::of(prop::collection::vec("[a-z ,]{1,8}", 0..4)),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(title, body, tags, pinned)| {
            let mut object = json!({"title": title, "body": body});
            if let Some(tags) = tags {
                object["tags"] = json!(tags);
            }
            if let Some(pinned) = pinned {
                object["pinned"] = json!(pinned);
            }
            object
        })
}

/// One corruption a model might make, at a position chosen by `at`.
fn corrupt(text: &str, kind: u8, at: usize) -> String {
    let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
    let i = boundaries[at % boundaries.len()];
    let mut out = text.to_string();
    match kind % 6 {
        0 => out.insert(i, '"'),
        1 if i < text.len() => {
            out.remove(i);
        }
        2 => out.insert(i, ','),
        3 => out = out.replacen("\": \"", "\": ", 1),
        4 => out.truncate(i),
        _ => out.insert_str(i, "\n}"),
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn valid_json_is_valid_and_unchanged(value in json_value(), pretty in any::<bool>()) {
        prop_assume!(!value.is_null());
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        for schema in [None, Some(note_schema())] {
            let outcome = repair(&text, schema.as_ref(), &RepairOptions::default());
            let fits = schema.as_ref().is_none_or(|s| s.first_violation(&value).is_none());
            match outcome.status {
                // Fits (or no schema to break): valid, unchanged.
                Status::Valid => {
                    prop_assert!(fits);
                    prop_assert_eq!(outcome.input.as_ref(), Some(&value));
                    prop_assert!(outcome.edits.is_empty());
                }
                // Breaks the schema: handed on unchanged, or losslessly coerced into a fit.
                Status::Invalid => {
                    prop_assert!(!fits);
                    prop_assert_eq!(outcome.input.as_ref(), Some(&value));
                }
                Status::Repaired => {
                    prop_assert!(!fits);
                    let schema = schema.as_ref().unwrap();
                    prop_assert!(schema.first_violation(outcome.input.as_ref().unwrap()).is_none());
                }
                other => prop_assert!(false, "{other:?} for valid JSON {text}"),
            }
        }
    }

    #[test]
    fn every_repair_validates_against_its_schema(object in note_object(), kind in any::<u8>(), at in any::<usize>()) {
        let schema = note_schema();
        let text = corrupt(&serde_json::to_string(&object).unwrap(), kind, at);
        let outcome = repair(&text, Some(&schema), &RepairOptions::default());
        if outcome.status == Status::Repaired {
            let input = outcome.input.unwrap();
            prop_assert!(schema.first_violation(&input).is_none(), "{} -> {}", text, input);
            prop_assert!(!outcome.edits.is_empty());
            for edit in &outcome.edits {
                prop_assert!(edit.span[0] <= edit.span[1] && edit.span[1] <= text.len());
            }
        }
    }

    /// The stream's allocation-free validity check agrees with the full parse.
    #[test]
    fn the_quick_validity_check_agrees_with_the_parse(value in json_value(), noise in "[\u{feff}{}\\[\\]\",: a1]{0,40}", which in 0u8..3) {
        let text = match which {
            0 => serde_json::to_string(&value).unwrap(),
            1 => format!("\u{feff}{}", serde_json::to_string(&value).unwrap()),
            _ => noise,
        };
        prop_assert_eq!(is_valid_for_cli(&text), parse_as_cli(&text).is_some(), "{:?}", text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}", schema in any::<bool>()) {
        let schema = schema.then(note_schema);
        let outcome = repair(&text, schema.as_ref(), &RepairOptions::default());
        prop_assert!(outcome.status != Status::Refused || outcome.reason.is_some());
    }

    #[test]
    fn json_like_text_never_panics(text in "[{}\\[\\]\"':,a-z0-9 \\\\\n]{0,120}") {
        let _ = repair(&text, Some(&note_schema()), &RepairOptions::default());
        let _ = repair(&text, None, &RepairOptions::default());
    }
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let cases = [
        ("[".repeat(100_000), RefusalCode::NoObject),
        (format!("{{\"title\": {}", "[".repeat(100_000)), RefusalCode::TooDeep),
        ("{\"a\":".repeat(50_000), RefusalCode::TooDeep),
        (format!("{{\"t\": {}", "{\"a\": [".repeat(30_000)), RefusalCode::TooDeep),
    ];
    for (input, code) in cases {
        let outcome = repair(&input, Some(&note_schema()), &RepairOptions::default());
        assert_eq!(outcome.status, Status::Refused);
        assert_eq!(outcome.reason.unwrap().code, code);
    }
}

#[test]
fn oversized_input_is_refused() {
    let options = RepairOptions { max_input_bytes: 64, ..RepairOptions::default() };
    let input = format!("{{\"title\": {}}}", "x".repeat(100));
    let outcome = repair(&input, None, &options);
    assert_eq!(outcome.reason.unwrap().code, RefusalCode::TooLarge);
}

/// Corruptions that lose nothing: a repair must give back exactly the original object.
fn lossless_corruption(text: &str, title: &str, kind: u8) -> String {
    match kind % 5 {
        0 => text.replacen(
            &format!("\"title\":{}", serde_json::to_string(title).unwrap()),
            &format!("\"title\": {title}"),
            1,
        ),
        1 => format!("```json\n{text}\n```"),
        2 => text[..text.len() - 1].to_string(),
        3 => format!("Here you go: {text} Done."),
        _ => text.replacen(",", ",,", 1),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn lossless_corruptions_repair_to_the_original_or_are_refused(
        object in note_object(),
        title in "[a-zA-Z][a-zA-Z ]{0,10}[a-zA-Z]",
        kind in any::<u8>(),
    ) {
        let mut object = object;
        object["title"] = json!(title);
        let text = serde_json::to_string(&object).unwrap();
        let corrupted = lossless_corruption(&text, &title, kind);
        prop_assume!(corrupted != text);
        let outcome = repair(&corrupted, Some(&note_schema()), &RepairOptions::default());
        if outcome.status == Status::Repaired {
            prop_assert_eq!(outcome.input.as_ref(), Some(&object), "{}", corrupted);
        }
    }
}
