//! Attack round 11 on the offline tools: a `len` that is not a count of chars (a string, a
//! fraction, a boolean) was read as "no length recorded", so a cut input was repaired as if it
//! were whole. Now such a call is refused as possibly cut, in records, transcripts and the hook.

mod common;

use common::toolmend;
use serde_json::{json, Value};

fn schema() -> Value {
    json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": false})
}

const RAW: &str = r#"{"q": abc}"#;

fn outcomes(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_record_whose_len_is_not_a_count_is_refused_as_possibly_cut() {
    let lens = [json!("2600"), json!(2090.0), json!(1e30), json!(true), json!(-1), json!([])];
    let records: String = lens
        .iter()
        .map(|len| format!("{}\n", json!({"schema": schema(), "raw": RAW, "stop_reason": "tool_use", "len": len})))
        .collect();
    let run = toolmend(&["repair"], &records);
    let results = outcomes(&run.stdout);
    assert_eq!(results.len(), lens.len());
    for (len, result) in lens.iter().zip(&results) {
        assert_eq!(result["status"], "refused", "len {len}: {result}");
        assert_eq!(result["reason"]["code"], "truncated", "len {len}: {result}");
        assert!(result["reason"]["message"].as_str().unwrap().contains(&len.to_string()), "{result}");
    }
}

#[test]
fn a_whole_len_or_none_still_repairs() {
    let records: String = [json!(10), Value::Null]
        .iter()
        .map(|len| format!("{}\n", json!({"schema": schema(), "raw": RAW, "stop_reason": "tool_use", "len": len})))
        .collect();
    let results = outcomes(&toolmend(&["repair"], &records).stdout);
    assert!(results.iter().all(|r| r["status"] == "repaired" && r["input"] == json!({"q": "abc"})), "{results:?}");
}

#[test]
fn a_transcript_call_whose_len_is_a_string_is_not_fixed() {
    let dir = std::env::temp_dir().join(format!("toolmend-round11-len-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = json!({"type": "api-request-shape", "sessionId": "s",
        "shape": {"tools": [{"name": "mcp__a__t", "input_schema": schema()}]}});
    let block = json!({"type": "tool_use", "id": "toolu_a", "name": "mcp__a__t",
        "input": {"__unparsedToolInput": {"raw": RAW, "len": "2600"}}});
    let assistant = json!({"type": "assistant", "sessionId": "s", "message": {"id": "msg_1", "role": "assistant",
        "stop_reason": "tool_use", "content": [block]}});
    let (input, output) = (dir.join("in.jsonl"), dir.join("out.jsonl"));
    let transcript = format!("{shape}\n{assistant}\n");
    std::fs::write(&input, &transcript).unwrap();
    let run = toolmend(&["fix-transcript", input.to_str().unwrap(), output.to_str().unwrap()], "");
    let fixed = std::fs::read_to_string(&output).unwrap_or_default();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(fixed, transcript, "the call was changed: {}", String::from_utf8_lossy(&run.stderr));
}
