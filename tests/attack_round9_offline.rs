//! Attack round 9 on the offline tools (scan, fix-transcript, the PostToolBatch hook) and the
//! binary: each test rebuilds one finding and fails without its fix.

mod common;

use common::toolmend;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmend-round9-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn schema_q(kind: &str) -> Value {
    json!({"type": "object", "properties": {"q": {"type": kind}}, "required": ["q"], "additionalProperties": false})
}

fn shape(hash: Option<&str>, tools: &[(&str, Value)]) -> Value {
    let tools: Vec<Value> = tools.iter().map(|(name, schema)| json!({"name": name, "input_schema": schema})).collect();
    let mut line = json!({"type": "api-request-shape", "sessionId": "s", "shape": {"tools": tools}});
    if let Some(hash) = hash {
        line["shapeHash"] = hash.into();
    }
    line
}

fn unparsed(id: &str, name: &str, raw: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": name,
        "input": {"__unparsedToolInput": {"raw": raw, "len": raw.encode_utf16().count()}}})
}

fn assistant(message: &str, request: Option<&str>, blocks: Vec<Value>) -> Value {
    let mut line = json!({"type": "assistant", "sessionId": "s", "message": {"id": message, "role": "assistant",
        "stop_reason": "tool_use", "content": blocks}});
    if let Some(request) = request {
        line["requestRef"] = request.into();
    }
    line
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `fix-transcript IN OUT` on `transcript`: the copy's bytes and stderr.
fn fix(name: &str, transcript: &[u8]) -> (Vec<u8>, String) {
    let dir = scratch(name);
    let (input, output) = (dir.join("in.jsonl"), dir.join("out.jsonl"));
    std::fs::write(&input, transcript).unwrap();
    let run = toolmend(&["fix-transcript", input.to_str().unwrap(), output.to_str().unwrap()], "");
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let fixed = std::fs::read(&output).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (fixed, text(&run.stderr))
}

/// `scan DIR --json` over one transcript.
fn scan(name: &str, transcript: &[u8]) -> Value {
    let dir = scratch(name);
    std::fs::write(dir.join("t.jsonl"), transcript).unwrap();
    let run = toolmend(&["scan", dir.to_str().unwrap(), "--json"], "");
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
    serde_json::from_slice(&run.stdout).unwrap()
}

/// The hook on `transcript` for the call `id`: its stdout's additionalContext and its stderr.
fn hook(name: &str, transcript: &[u8], id: &str, tool: &str, raw: &str, why: Option<&str>) -> (String, String) {
    let dir = scratch(name);
    let path = dir.join("t.jsonl");
    std::fs::write(&path, transcript).unwrap();
    let mut unparsed = json!({"raw": raw, "len": raw.encode_utf16().count()});
    if let Some(why) = why {
        unparsed["why"] = why.into();
    }
    let input = json!({"hook_event_name": "PostToolBatch", "transcript_path": path,
        "tool_calls": [{"tool_name": tool, "tool_use_id": id, "tool_input": {"__unparsedToolInput": unparsed}}]});
    let run = toolmend(&["hook", "post-tool-batch"], &input.to_string());
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
    let context = match run.stdout.is_empty() {
        true => String::new(),
        false => {
            let out: Value = serde_json::from_slice(&run.stdout).unwrap();
            out["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string()
        }
    };
    (context, text(&run.stderr))
}

/// W2: two calls in one line with the same unparsed text, only one of which repairs under its
/// own schema: fix-transcript replaced every copy of the text, so both changed.
#[test]
fn only_the_repaired_block_of_a_line_changes_even_when_another_has_the_same_text() {
    let raw = r#"{"q": abc}"#;
    let lines = [
        shape(None, &[("mcp__a__t", schema_q("string")), ("mcp__b__t", schema_q("integer"))]),
        assistant("msg_1", None, vec![unparsed("toolu_a", "mcp__a__t", raw), unparsed("toolu_b", "mcp__b__t", raw)]),
    ];
    let (fixed, stderr) = fix("w2", jsonl(&lines).as_bytes());
    let fixed: Vec<Value> = text(&fixed).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let content = &fixed[1]["message"]["content"];
    assert_eq!(content[0]["input"], json!({"q": "abc"}), "{stderr}");
    assert_eq!(content[1]["input"], lines[1]["message"]["content"][1]["input"], "{stderr}");
}

/// L1: one byte that is not UTF-8 cost the whole transcript in scan, fix-transcript and the hook.
#[test]
fn a_line_not_utf8_is_reported_and_kept_and_the_rest_is_read() {
    let raw = r#"{"q": abc}"#;
    let mut transcript = jsonl(&[shape(None, &[("mcp__a__t", schema_q("string"))])]).into_bytes();
    transcript.extend_from_slice(b"{\"type\": \"user\", \"message\": \"caf\xe9\"}\n");
    transcript
        .extend_from_slice(jsonl(&[assistant("msg_1", None, vec![unparsed("toolu_a", "mcp__a__t", raw)])]).as_bytes());

    let report = scan("l1", &transcript);
    assert_eq!(report["tools"]["mcp__a__t"]["repairable"], 1, "{report}");
    assert_eq!(report["problems"][0]["line"], 2, "{report}");

    let (fixed, stderr) = fix("l1", &transcript);
    let fixed_lines: Vec<&[u8]> = fixed.split(|&b| b == b'\n').collect();
    assert_eq!(fixed_lines[1], b"{\"type\": \"user\", \"message\": \"caf\xe9\"}", "kept byte for byte");
    assert!(text(fixed_lines[2]).contains(r#"{"q":"abc"}"#), "{stderr}");
    assert!(stderr.contains("in.jsonl:2: not UTF-8"), "{stderr}");

    let (context, stderr) = hook("l1", &transcript, "toolu_a", "mcp__a__t", raw, None);
    assert!(context.contains(r#"The corrected input is: {"q":"abc"}"#), "{context} {stderr}");
    assert!(stderr.contains("t.jsonl:2: not UTF-8"), "{stderr}");
}

/// W3: the tool list a call was sent with is the one its request names (requestRef ->
/// api-request's shapeHash -> api-request-shape), not the last one read; a call whose list is not
/// in the transcript is refused.
#[test]
fn a_call_is_judged_by_the_tool_list_its_request_names() {
    let raw = r#"{"q": abc}"#;
    let lines = [
        shape(Some("h1"), &[("mcp__a__t", schema_q("string"))]),
        json!({"type": "api-request", "id": "req_1", "shapeHash": "h1"}),
        shape(Some("h2"), &[("mcp__a__t", schema_q("integer"))]),
        json!({"type": "api-request", "id": "req_2", "shapeHash": "h2"}),
        json!({"type": "api-request", "id": "req_3", "shapeHash": "h3"}),
        assistant("msg_1", Some("req_1"), vec![unparsed("toolu_1", "mcp__a__t", raw)]),
        assistant("msg_3", Some("req_3"), vec![unparsed("toolu_3", "mcp__a__t", r#"{"q": 7,}"#)]),
    ];
    let transcript = jsonl(&lines);
    let (fixed, stderr) = fix("w3", transcript.as_bytes());
    let fixed: Vec<Value> = text(&fixed).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(fixed[5]["message"]["content"][0]["input"], json!({"q": "abc"}), "{stderr}");
    assert_eq!(fixed[6], lines[6], "{stderr}");
    assert!(stderr.contains("toolu_3: ") && stderr.contains("h3"), "{stderr}");

    let report = scan("w3", transcript.as_bytes());
    assert_eq!(report["tools"]["mcp__a__t"]["repairable"], 1, "{report}");
    assert_eq!(report["tools"]["mcp__a__t"]["refused"]["unusable_schema"], 1, "{report}");

    let run = toolmend(&["repair"], &transcript);
    let results: Vec<Value> = text(&run.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((results[0]["status"].as_str(), &results[0]["input"]), (Some("repaired"), &json!({"q": "abc"})));
    assert_eq!(results[1]["reason"]["code"], "unusable_schema", "{}", results[1]);

    let (context, _) = hook("w3", transcript.as_bytes(), "toolu_1", "mcp__a__t", raw, None);
    assert!(context.contains(r#"The corrected input is: {"q":"abc"}"#), "{context}");
    let (context, _) = hook("w3", transcript.as_bytes(), "toolu_3", "mcp__a__t", r#"{"q": 7,}"#, None);
    assert!(context.contains("could not be repaired safely") && context.contains("h3"), "{context}");
}

/// L3: a lone surrogate escape (JavaScript writes them) made the whole line unreadable.
#[test]
fn a_line_with_a_lone_surrogate_keeps_its_bytes_and_its_other_calls() {
    let raw = r#"{"q": abc}"#;
    let call_line =
        assistant("msg_1", None, vec![json!({"type": "text", "text": "LONE"}), unparsed("toolu_a", "mcp__a__t", raw)])
            .to_string()
            .replace("LONE", r"x\ud800y");
    let cut_line = assistant("msg_2", None, vec![unparsed("toolu_b", "mcp__a__t", "RAW")])
        .to_string()
        .replace("RAW", r#"{\"q\": a\udc00b}"#);
    let transcript = format!("{}\n{call_line}\n{cut_line}\n", shape(None, &[("mcp__a__t", schema_q("string"))]));
    let (fixed, stderr) = fix("l3", transcript.as_bytes());
    let fixed = text(&fixed);
    let lines: Vec<&str> = fixed.lines().collect();
    assert_eq!(
        lines[1],
        call_line.replace(&format!("{}", json!({"__unparsedToolInput": {"raw": raw, "len": 10}})), r#"{"q":"abc"}"#)
    );
    assert!(lines[1].contains(r"x\ud800y"), "{}", lines[1]);
    assert_eq!(lines[2], cut_line, "{stderr}");
    assert!(stderr.contains("toolu_b: ") && stderr.contains("lone surrogate"), "{stderr}");
}

/// W5: a tool_use id carried by two blocks: the last one won without a word.
#[test]
fn a_tool_use_id_given_twice_is_refused_and_said() {
    let lines = [
        shape(None, &[("mcp__a__t", schema_q("string"))]),
        assistant("msg_1", None, vec![unparsed("toolu_a", "mcp__a__t", r#"{"q": one}"#)]),
        assistant("msg_2", None, vec![unparsed("toolu_a", "mcp__a__t", r#"{"q": two}"#)]),
    ];
    let transcript = jsonl(&lines);
    let (fixed, stderr) = fix("w5", transcript.as_bytes());
    assert_eq!(text(&fixed), transcript, "{stderr}");
    assert!(stderr.contains("toolu_a: ") && stderr.contains("more than one block"), "{stderr}");
    let (context, _) = hook("w5", transcript.as_bytes(), "toolu_a", "mcp__a__t", r#"{"q": two}"#, None);
    assert!(context.contains("more than one block"), "{context}");
}

/// W4: a late-joining MCP tool's valid call was told "not valid JSON ... could not be repaired".
#[test]
fn the_hook_says_a_valid_late_call_was_valid() {
    let raw = r#"{"q": "abc"}"#;
    let transcript = jsonl(&[shape(None, &[("mcp__a__t", schema_q("string"))])]);
    let (context, stderr) =
        hook("w4", transcript.as_bytes(), "toolu_a", "mcp__a__t", raw, Some("may_be_judged_repaired"));
    assert!(context.contains("valid JSON that fits the tool's schema"), "{context} {stderr}");
    assert!(!context.contains("not valid JSON") && !context.contains("could not be repaired"), "{context}");
}

/// D2: a FIFO at transcript_path blocked the hook until someone wrote to it.
#[cfg(unix)]
#[test]
fn a_fifo_as_the_transcript_is_refused_without_blocking_the_hook() {
    let dir = scratch("d2");
    let fifo = dir.join("t.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let input = json!({"transcript_path": fifo, "tool_calls": [{"tool_name": "mcp__a__t", "tool_use_id": "toolu_a",
        "tool_input": {"__unparsedToolInput": {"raw": "{\"q\": abc}", "len": 10}}}]});
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["hook", "post-tool-batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.to_string().as_bytes()).unwrap();
    // A hook that blocks on the FIFO never ends on its own: give it a minute, then fail.
    let mut ended = None;
    for _ in 0..600 {
        if let Some(status) = child.try_wait().unwrap() {
            ended = Some(status);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if ended.is_none() {
        let _ = child.kill();
    }
    let output = child.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ended.is_some(), "the hook blocked on the FIFO");
    assert!(text(&output.stderr).contains("not a regular file"), "{}", text(&output.stderr));
}

/// UX: an absent transcript said nothing; the call was refused with no word why.
#[test]
fn the_hook_says_when_the_transcript_is_not_there() {
    let input = json!({"transcript_path": "/nonexistent/toolmend/t.jsonl", "tool_calls": [{"tool_name": "mcp__a__t",
        "tool_use_id": "toolu_a", "tool_input": {"__unparsedToolInput": {"raw": "{\"q\": abc}", "len": 10}}}]});
    let run = toolmend(&["hook", "post-tool-batch"], &input.to_string());
    assert_eq!(run.status.code(), Some(0));
    let stderr = text(&run.stderr);
    assert!(stderr.contains("/nonexistent/toolmend/t.jsonl: the transcript is not there"), "{stderr}");
}

/// UX: a UTF-8 BOM before the first line made it unreadable (its schemas were lost).
#[test]
fn a_bom_before_the_first_line_is_read_past_and_kept() {
    let raw = r#"{"q": abc}"#;
    let transcript = format!(
        "\u{feff}{}",
        jsonl(&[
            shape(None, &[("mcp__a__t", schema_q("string"))]),
            assistant("msg_1", None, vec![unparsed("toolu_a", "mcp__a__t", raw)])
        ])
    );
    let (fixed, stderr) = fix("bom", transcript.as_bytes());
    let fixed = text(&fixed);
    assert!(fixed.starts_with("\u{feff}{\"type\":\"api-request-shape\""), "{fixed}");
    assert!(fixed.contains(r#""input":{"q":"abc"}"#), "{stderr}");
    let report = scan("bom", transcript.as_bytes());
    assert_eq!(report["tools"]["mcp__a__t"]["repairable"], 1, "{report}");
    let records = format!("\u{feff}{}\n", json!({"id": "a", "schema": schema_q("string"), "raw": raw}));
    let run = toolmend(&["repair"], &records);
    assert!(text(&run.stdout).contains(r#""status":"repaired""#), "{}", text(&run.stderr));
}

/// UX: `fix-transcript IN -` wrote a file named `-`.
#[test]
fn a_dash_as_the_output_is_standard_output() {
    let dir = scratch("dash");
    let input = dir.join("in.jsonl");
    let transcript = jsonl(&[shape(None, &[("mcp__a__t", schema_q("string"))])]);
    std::fs::write(&input, &transcript).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["fix-transcript", input.to_str().unwrap(), "-"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), transcript);
    assert!(!dir.join("-").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// L2: a write that failed half-way left a cut copy behind, and the next try refused (it exists).
#[cfg(unix)]
#[test]
fn a_failed_write_leaves_no_copy_and_the_next_try_runs() {
    let dir = scratch("l2");
    let (input, output) = (dir.join("in.jsonl"), dir.join("out.jsonl"));
    let raw = r#"{"q": abc}"#;
    let mut lines = vec![shape(None, &[("mcp__a__t", schema_q("string"))])];
    lines.extend(
        (0..40).map(|n| assistant(&format!("msg_{n}"), None, vec![unparsed(&format!("toolu_{n}"), "mcp__a__t", raw)])),
    );
    std::fs::write(&input, jsonl(&lines)).unwrap();
    // Files may not grow past 1 block of 512 bytes: the write fails (EFBIG, its signal ignored).
    let script = format!(
        "trap '' XFSZ; ulimit -f 1; exec '{}' fix-transcript '{}' '{}'",
        env!("CARGO_BIN_EXE_toolmend"),
        input.display(),
        output.display()
    );
    let failed = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_ne!(failed.status.code(), Some(0), "{}", text(&failed.stderr));
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["in.jsonl"], "nothing but the input is left");
    let run = toolmend(&["fix-transcript", input.to_str().unwrap(), output.to_str().unwrap()], "");
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(text(&std::fs::read(&output).unwrap()).matches(r#"{"q":"abc"}"#).count(), 40);
    let again = toolmend(&["fix-transcript", input.to_str().unwrap(), output.to_str().unwrap()], "");
    assert_ne!(again.status.code(), Some(0), "never writes over a file");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// UX: a reader that closed its end (`| head`) made toolmend panic (exit 101).
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    use std::os::fd::FromRawFd;
    let dir = scratch("epipe");
    let mut ends = [0; 2];
    // SAFETY: pipe writes two descriptors into the array; each is owned once below.
    assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (reader, writer) = unsafe { (std::fs::File::from_raw_fd(ends[0]), std::fs::File::from_raw_fd(ends[1])) };
    drop(reader);
    let run = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["scan", dir.to_str().unwrap()])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(!text(&run.stderr).contains("panicked"), "{}", text(&run.stderr));
}
