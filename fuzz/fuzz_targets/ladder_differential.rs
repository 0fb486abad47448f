//! Differential against serde_json: whatever it accepts is `valid`, with the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolmend::repair::{repair, RepairOptions, Status};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(expected) = serde_json::from_str::<serde_json::Value>(text) else { return };
    let outcome = repair(text, None, &RepairOptions::default());
    assert_eq!(outcome.status, Status::Valid, "{text:?}");
    let expected = if expected.is_null() { serde_json::json!({}) } else { expected };
    assert_eq!(outcome.input, Some(expected), "{text:?}");
    assert!(outcome.edits.is_empty());
});
