//! Rung 1's second half: input that parses as JSON but breaks the schema. Only lossless
//! coercions are tried — a string holding JSON of the wanted type, the whole input encoded as a
//! JSON string, a numeric or boolean string — and the result is handed on only if it validates
//! and is the one reading that does. Otherwise the input is `invalid` and goes through unchanged.

use super::align::Aligner;
use super::edit::{Edit, EditKind};
use super::lenient::{parse_document, ParseOptions};
use super::outcome::{Outcome, Refusal, RefusalCode};
use super::readings::{Reading, Readings};
use super::{RepairOptions, StopReason};
use crate::schema::ToolSchema;
use serde_json::Value;

/// `value` (parsed from `raw`) breaks `schema` at `pointer` with `message`.
pub fn coerce(raw: &str, value: Value, schema: &ToolSchema, options: &RepairOptions) -> Outcome {
    let Some((pointer, message)) = schema.first_violation(&value) else {
        return Outcome::valid(value);
    };
    let at = if pointer.is_empty() { "the input".to_string() } else { format!("'{pointer}'") };
    let invalid =
        |value| Outcome::invalid(value, Refusal::new(RefusalCode::SchemaMismatch, format!("{at}: {message}"), None));
    let may_be_cut = options.stop_reason.as_deref().map(StopReason::parse).is_some_and(|r| !r.ends_block_normally());
    if may_be_cut {
        return invalid(value);
    }
    let mut readings = Readings::new(Some(schema), options.tool.as_deref());
    let offered = offer_coerced(raw, schema, options.parse, &mut readings).and_then(|()| match &value {
        Value::String(inner) => offer_decoded(raw, inner, schema, options.parse, &mut readings),
        _ => Ok(()),
    });
    match offered.and_then(|()| readings.decide()) {
        Ok((repaired, edits)) => Outcome::repaired(repaired, edits),
        Err(_) => invalid(value),
    }
}

/// The input's own tree with lossless coercions.
fn offer_coerced(raw: &str, schema: &ToolSchema, parse: ParseOptions, readings: &mut Readings) -> Result<(), Refusal> {
    let Ok(document) = parse_document(raw, schema.shapes(), parse) else {
        return Ok(());
    };
    let mut edits = document.edits;
    if let Ok(value) = Aligner::lossless(schema.shapes()).align_root(&document.root, &mut edits) {
        readings.offer(Reading { value, edits, tree: Some(document.root) })?;
    }
    Ok(())
}

/// The whole input was a JSON string: the object it holds, coerced the same way.
fn offer_decoded(
    raw: &str,
    inner: &str,
    schema: &ToolSchema,
    parse: ParseOptions,
    readings: &mut Readings,
) -> Result<(), Refusal> {
    // Only what serde_json itself reads: the surrogate fallback would change the text.
    let Some(decoded @ Value::Object(_)) = serde_json::from_str::<Value>(inner).ok() else {
        return Ok(());
    };
    if super::json5_reading::has_duplicate_keys(inner) {
        return Err(Refusal::new(RefusalCode::Ambiguous, "the encoded input gives a key twice", None));
    }
    super::numeral::decoded_exactly(&decoded, "the encoded input", None)?;
    let whole = || vec![Edit::new(EditKind::DoubleEncoded, 0..raw.len(), "")];
    if schema.first_violation(&decoded).is_none() {
        return readings.offer(Reading { value: decoded, edits: whole(), tree: None });
    }
    let mut inner_readings = Readings::new(Some(schema), None);
    offer_coerced(inner, schema, parse, &mut inner_readings)?;
    if let Ok((value, mut edits)) = inner_readings.decide() {
        // The inner edits' spans point into the decoded text; the one edit names the input.
        edits.clear();
        edits.extend(whole());
        readings.offer(Reading { value, edits, tree: None })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::repair::{repair, RepairOptions, Status};
    use crate::schema::ToolSchema;
    use serde_json::{json, Value};

    /// The outcome's status for valid JSON `raw` breaking the schema of tool `tool`, and the
    /// input handed on when repaired.
    fn coerced(raw: &str, schema: Value, tool: &str) -> (Status, Option<Value>) {
        let schema = ToolSchema::compile(&schema).unwrap();
        let options = RepairOptions { tool: Some(tool.to_string()), ..RepairOptions::default() };
        let outcome = repair(raw, Some(&schema), &options);
        let input = (outcome.status == Status::Repaired).then_some(outcome.input).flatten();
        (outcome.status, input)
    }

    fn ids() -> Value {
        let properties = json!({
            "ids": {"type": "array", "items": {"type": "integer"}},
            "scores": {"type": "array", "items": {"type": "number"}},
            "filter": {"type": "object"},
        });
        json!({"type": "object", "properties": properties})
    }

    #[test]
    fn json_in_a_string_is_not_decoded_into_numbers_a_double_cannot_hold() {
        for raw in [
            r#"{"filter": "{\"user_id\": 1184457398123945991}"}"#,
            r#"{"ids": "[1, 1184457398123945991]"}"#,
            r#"{"ids": "[9007199254740993]"}"#,
            r#"{"scores": "[0.5, 1e400]"}"#,
            r#"{"filter": "{\"ratio\": 0.30000000000000001}"}"#,
        ] {
            assert_eq!(coerced(raw, ids(), "t"), (Status::Invalid, None), "{raw}");
        }
        let held = [
            (r#"{"filter": "{\"user_id\": 42}"}"#, json!({"filter": {"user_id": 42}})),
            (r#"{"ids": "[1, 2]"}"#, json!({"ids": [1, 2]})),
            (r#"{"scores": "[0.5, 1.25]"}"#, json!({"scores": [0.5, 1.25]})),
        ];
        for (raw, input) in held {
            assert_eq!(coerced(raw, ids(), "t"), (Status::Repaired, Some(input)), "{raw}");
        }
    }

    #[test]
    fn an_encoded_input_or_arguments_string_is_not_decoded_into_numbers_a_double_cannot_hold() {
        let properties = json!({"issue_id": {"type": "integer"}, "note": {"type": "string"}});
        let issue = || json!({"type": "object", "properties": properties, "required": ["issue_id"]});
        for raw in [
            r#""{\"issue_id\": 1184457398123945991}""#,
            r#"{"name": "close_issue", "arguments": "{\"issue_id\": 1184457398123945991}"}"#,
        ] {
            assert_eq!(coerced(raw, issue(), "close_issue"), (Status::Invalid, None), "{raw}");
        }
        for raw in [
            r#""{\"issue_id\": 42}""#,
            r#"{"name": "close_issue", "arguments": "{\"issue_id\": 42}"}"#,
            // Written as a number, not read from a string: the input's own, as the CLI reads it.
            r#"{"name": "close_issue", "arguments": {"issue_id": 1184457398123945991}}"#,
        ] {
            assert_eq!(coerced(raw, issue(), "close_issue").0, Status::Repaired, "{raw}");
        }
    }

    #[test]
    fn an_encoded_input_holding_another_keys_call_tags_is_not_decoded() {
        let properties =
            json!({"command": {"type": "string"}, "timeout": {"type": "integer"}, "limit": {"type": "integer"}});
        let bash = || json!({"type": "object", "properties": properties, "required": ["command"]});
        for raw in [
            r#""{\"command\": \"npm test\\n<parameter name=\\\"timeout\\\">600000</parameter>\"}""#,
            r#""{\"command\": \"npm test<arg_key>timeout</arg_key><arg_value>5</arg_value>\"}""#,
            r#""{\"command\": \"x<parameter=limit>5</parameter>\"}""#,
        ] {
            assert_eq!(coerced(raw, bash(), "Bash"), (Status::Invalid, None), "{raw}");
        }
        let plain = r#""{\"command\": \"npm test\"}""#;
        assert_eq!(coerced(plain, bash(), "Bash"), (Status::Repaired, Some(json!({"command": "npm test"}))));
    }
}
