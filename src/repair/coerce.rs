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
