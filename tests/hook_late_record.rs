//! The PostToolBatch hook fires while the CLI may still be writing the transcript: a tool list
//! appended after the hook's first look must still be found (the hook looks again), and the
//! call repaired with it. The test appends the record only once the hook has read the file to
//! its end, so the first look cannot have seen it.

use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmend-hook-late-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn shape_line(tool: &str) -> String {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"],
        "additionalProperties": false});
    format!(
        "{}\n",
        json!({"type": "api-request-shape", "sessionId": "s", "shape": {"tools": [{"name": tool, "input_schema": schema}]}})
    )
}

fn assistant_line(id: &str, tool: &str, raw: &str) -> String {
    let block = json!({"type": "tool_use", "id": id, "name": tool,
        "input": {"__unparsedToolInput": {"raw": raw, "len": raw.encode_utf16().count()}}});
    let line = json!({"type": "assistant", "sessionId": "s", "message": {"id": "msg_1", "role": "assistant",
        "stop_reason": "tool_use", "content": [block]}});
    format!("{line}\n")
}

fn start_hook(transcript: &Path, id: &str, tool: &str, raw: &str) -> Child {
    let input = json!({"hook_event_name": "PostToolBatch", "transcript_path": transcript,
        "tool_calls": [{"tool_name": tool, "tool_use_id": id,
            "tool_input": {"__unparsedToolInput": {"raw": raw, "len": raw.encode_utf16().count()}}}]});
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["hook", "post-tool-batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    child
}

/// Waits until `child` holds `path` open with its offset at `length` (it read the file to the
/// end), read from /proc. False if it ended or a minute went by first.
fn wait_until_read_to(child: &mut Child, path: &Path, length: u64) -> bool {
    let started = Instant::now();
    let path = path.canonicalize().unwrap();
    while started.elapsed() < Duration::from_secs(60) {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        let fds = std::fs::read_dir(format!("/proc/{}/fd", child.id())).into_iter().flatten().flatten();
        for fd in fds {
            if std::fs::read_link(fd.path()).ok().as_deref() != Some(path.as_path()) {
                continue;
            }
            let info =
                std::fs::read_to_string(format!("/proc/{}/fdinfo/{}", child.id(), fd.file_name().to_string_lossy()));
            let pos =
                info.ok().and_then(|i| i.lines().find_map(|l| l.strip_prefix("pos:").map(|p| p.trim().parse::<u64>())));
            if pos == Some(Ok(length)) {
                return true;
            }
        }
        std::thread::yield_now();
    }
    false
}

fn context_of(output: &std::process::Output) -> String {
    if output.stdout.is_empty() {
        return String::new();
    }
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    out["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string()
}

#[cfg(target_os = "linux")]
#[test]
fn a_tool_list_written_after_the_hook_first_looked_is_used() {
    let (id, tool, raw) = ("toolu_late", "mcp__a__t", r#"{"q": abc}"#);
    let dir = scratch("list");
    let transcript = dir.join("t.jsonl");
    let first = assistant_line(id, tool, raw);
    std::fs::write(&transcript, &first).unwrap();
    let mut hook = start_hook(&transcript, id, tool, raw);
    let read = wait_until_read_to(&mut hook, &transcript, first.len() as u64);
    // The CLI appends the request's tool list late.
    std::fs::OpenOptions::new().append(true).open(&transcript).unwrap().write_all(shape_line(tool).as_bytes()).unwrap();
    let output = hook.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(read, "the hook never read the transcript to its end");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let context = context_of(&output);
    assert!(context.contains(r#"{"q":"abc"}"#), "the late tool list was not used: {context:?}");
}

/// The control: with no tool list ever written, the same call gets no repair (so the test above
/// passes only because the late record was read).
#[cfg(target_os = "linux")]
#[test]
fn without_the_tool_list_the_call_is_not_repaired() {
    let (id, tool, raw) = ("toolu_late", "mcp__a__t", r#"{"q": abc}"#);
    let dir = scratch("none");
    let transcript = dir.join("t.jsonl");
    std::fs::write(&transcript, assistant_line(id, tool, raw)).unwrap();
    let output = start_hook(&transcript, id, tool, raw).wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(!context_of(&output).contains(r#"{"q":"abc"}"#), "{}", context_of(&output));
}
