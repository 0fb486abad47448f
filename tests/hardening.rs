//! Issue 14: the sidecar and the offline tools under hostile and careless use.

mod common;

use common::{toolmend, Sidecar};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use toolmend::demo::fake_upstream::Reply;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolmend-hardening-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Sends raw bytes to the sidecar (no client normalizes the path) and reads until it closes
/// the connection.
async fn raw_request(url: &str, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(url.trim_start_matches("http://")).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    // A guard only, so that a connection the sidecar keeps open fails the test instead of hanging.
    let read = tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the sidecar did not close the connection: {}", text(&answer));
    text(&answer)
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

// --- the sidecar -------------------------------------------------------------------------

#[tokio::test]
async fn posted_events_are_bounded_by_bytes_with_a_413_and_a_metric() {
    let sidecar = Sidecar::start_with(
        |_| Reply::json(200, &json!({})),
        |config| {
            config.max_event_bytes = 4096;
            config.events_max_bytes = 20_000;
        },
    )
    .await;
    let client = reqwest::Client::new();
    let post = |body: Value| client.post(format!("{}/events", sidecar.url)).json(&body).send();
    let too_large = post(json!({"kind": "reported", "raw": "x".repeat(5000)})).await.unwrap();
    assert_eq!(too_large.status(), 413);
    assert!(too_large.text().await.unwrap().contains("max_event_bytes"));
    for n in 0..40 {
        let response = post(json!({"n": n, "raw": "y".repeat(3000)})).await.unwrap();
        assert_eq!(response.status(), 201);
    }
    let events = sidecar.get("/events").await;
    assert!(events.len() <= 20_000 + 100, "the store keeps at most events_max_bytes: {} bytes", events.len());
    let parsed: Value = serde_json::from_str(&events).unwrap();
    let kept = parsed["events"].as_array().unwrap();
    assert!(!kept.is_empty() && kept.len() < 40);
    assert_eq!(kept.last().unwrap()["n"], 39, "the newest events stay");
    let metrics = sidecar.get("/metrics").await;
    assert!(metrics.contains(r#"toolmend_events_dropped_total{reason="post_too_large"} 1"#), "{metrics}");
    // What a web page can send to another origin without a preflight: refused, not stored.
    let simple = client
        .post(format!("{}/events", sidecar.url))
        .header("content-type", "text/plain")
        .body(json!({"kind": "repaired", "n": "forged"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(simple.status(), 415);
    assert!(!sidecar.get("/events").await.contains("forged"));
}

#[tokio::test]
async fn only_loopback_names_and_the_listen_address_are_answered() {
    let sidecar = Sidecar::start(|_| Reply::json(200, &json!({"ok": true}))).await;
    let port = sidecar.url.rsplit(':').next().unwrap().to_string();
    for host in ["attacker.example", "127.0.0.1.attacker.example:80", "[::2]"] {
        let answer =
            raw_request(&sidecar.url, &format!("GET /events HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"))
                .await;
        assert!(answer.starts_with("HTTP/1.1 421"), "{host}: {answer}");
        assert!(answer.contains("allowed_hosts") && !answer.contains("\"events\""), "{answer}");
    }
    for host in ["localhost", &format!("127.0.0.1:{port}"), "[::1]:1", "LocalHost:9"] {
        let answer =
            raw_request(&sidecar.url, &format!("GET /v1/models HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"))
                .await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{host}: {answer}");
    }
    assert_eq!(sidecar.upstream.requests().len(), 4, "refused requests never reach the upstream");
}

#[tokio::test]
async fn allowed_hosts_admits_a_name_for_deliberate_remote_use() {
    let sidecar = Sidecar::start_with(
        |_| Reply::json(200, &json!({})),
        |config| config.allowed_hosts = vec!["sidecar.lan".into()],
    )
    .await;
    let answer =
        raw_request(&sidecar.url, "GET /healthz HTTP/1.1\r\nHost: sidecar.lan:8787\r\nConnection: close\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let answer =
        raw_request(&sidecar.url, "GET /healthz HTTP/1.1\r\nHost: other.lan\r\nConnection: close\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
}

#[tokio::test]
async fn dot_segments_cannot_leave_the_upstreams_path_prefix() {
    let sidecar = Sidecar::start_with(
        |_| Reply::json(200, &json!({})),
        |config| config.upstream = format!("{}/gateway/team-a", config.upstream),
    )
    .await;
    for path in ["/../../admin/keys", "/%2e%2e/%2E%2e/admin/keys", "/v1/../../admin", "/..%2fadmin"] {
        let answer =
            raw_request(&sidecar.url, &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"))
                .await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{path}: {answer}");
    }
    assert!(sidecar.upstream.requests().is_empty(), "{:?}", sidecar.upstream.requests()[0].path);
    let answer =
        raw_request(&sidecar.url, "GET /v1/x/./../models?a=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(sidecar.upstream.requests()[0].path, "/gateway/team-a/v1/models?a=1");
}

#[tokio::test]
async fn a_partial_request_is_dropped_after_the_header_read_timeout() {
    let sidecar = Sidecar::start_with(
        |_| Reply::json(200, &json!({})),
        |config| config.header_read_timeout = Duration::from_secs(1),
    )
    .await;
    let url = sidecar.url.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
        // A guard only: without the timeout the sidecar would hold the connection forever.
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        stream.write_all(b"POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nX-Partial: ").unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).map(|_| answer)
    })
    .await
    .unwrap();
    let answer = answer.expect("the sidecar closes the connection (not our read guard)");
    assert!(!text(&answer).contains("200 OK"), "{}", text(&answer));
    assert!(sidecar.upstream.requests().is_empty());
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_header_read_timeout() {
    let sidecar = Sidecar::start_with(
        |_| Reply::json(200, &json!({})),
        |config| config.header_read_timeout = Duration::from_secs(1),
    )
    .await;
    // No `Connection: close`: after its answer the connection idles until the sidecar ends it
    // (the read below returns then; without the timeout it would wait forever).
    let answer = raw_request(&sidecar.url, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test]
async fn a_response_longer_than_the_header_read_timeout_still_completes() {
    let stream = toolmend::demo::SEED_STREAM;
    let sidecar = Sidecar::start_with(
        move |_| Reply::sse(stream, stream.len() / 4 + 1).with_delay(Duration::from_millis(600)),
        |config| config.header_read_timeout = Duration::from_secs(1),
    )
    .await;
    let body =
        json!({"model": "m", "max_tokens": 10, "stream": true, "tools": toolmend::demo::seed_tools(), "messages": []});
    let response =
        reqwest::Client::new().post(format!("{}/v1/messages", sidecar.url)).json(&body).send().await.unwrap();
    let text = response.text().await.expect("the stream is not cut by the header timeout");
    assert!(text.contains("message_stop"), "{text}");
}

#[test]
fn a_pattern_only_a_backtracking_engine_reads_makes_the_schema_unusable() {
    // Attack round 24: `^(a|aa)+\1$` backtracked up to its step limit on every string (28 s for
    // 1,000 strings); patterns are run by a linear-time engine.
    let backtracking = json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|aa)+\\1$"}}});
    assert!(toolmend::schema::ToolSchema::compile(&backtracking).is_err());
    let plain = json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"}}});
    let schema = toolmend::schema::ToolSchema::compile(&plain).unwrap();
    assert!(schema.first_violation(&json!({"s": "a-b"})).is_none());
    assert!(schema.first_violation(&json!({"s": "A"})).is_some());
}

/// `d0` → `d1`/`e1` → … : a few KB whose every level doubles the ways a validator walks.
fn diamond_schema(depth: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let parts =
            json!({"allOf": [{"$ref": format!("#/$defs/d{}", i + 1)}, {"$ref": format!("#/$defs/e{}", i + 1)}]});
        defs.insert(format!("d{i}"), parts.clone());
        defs.insert(format!("e{i}"), parts);
    }
    let leaf = toolmend::demo::seed_tools()[0]["input_schema"].clone();
    defs.insert(format!("d{depth}"), leaf.clone());
    defs.insert(format!("e{depth}"), leaf);
    json!({"$ref": "#/$defs/d0", "$defs": defs})
}

#[tokio::test]
async fn a_schema_whose_checks_grow_exponentially_is_not_used_and_its_stream_passes_as_it_came() {
    // Attack round 23: checked, an input against 24 levels of diamonds takes 2^24 steps
    // (at 24 levels the errors alone filled 4 GB and the sidecar died).
    let stream = toolmend::demo::SEED_STREAM;
    let sidecar = Sidecar::start(move |_| Reply::sse(stream, 64)).await;
    let tools = json!([{"name": "search", "input_schema": diamond_schema(24)}]);
    let body = json!({"model": "m", "max_tokens": 10, "stream": true, "tools": tools, "messages": []});
    let response =
        reqwest::Client::new().post(format!("{}/v1/messages", sidecar.url)).json(&body).send().await.unwrap();
    assert_eq!(response.text().await.unwrap(), stream, "passed on as it came, not repaired");
    let events: Value = serde_json::from_str(&sidecar.get("/events").await).unwrap();
    let reason = &events["events"][0]["reason"];
    assert_eq!(reason["code"], "unusable_schema", "{events}");
    assert!(reason["message"].as_str().unwrap().contains("too costly to check"), "{events}");
    assert!(sidecar.get("/healthz").await.contains("ok"));
}

/// `toolmend serve` with `args` and `env`, stopped as soon as it listens (or exits): its
/// exit code (None if it was stopped) and what it logged.
fn serve_logs(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .arg("serve")
        .args(args)
        .envs(env.iter().copied())
        .env_remove("TOOLMEND_CONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut logs = String::new();
    let mut buffer = [0u8; 4096];
    let code = loop {
        if logs.contains("toolmend serving") {
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            child.wait().unwrap();
            break None;
        }
        match stderr.read(&mut buffer) {
            Ok(0) | Err(_) => break child.wait().unwrap().code(),
            Ok(n) => logs.push_str(&text(&buffer[..n])),
        }
    };
    let _ = stderr.read_to_string(&mut logs);
    (code, logs)
}

#[test]
fn the_upstream_password_is_never_logged_and_logs_to_a_pipe_have_no_colour() {
    let (code, logs) =
        serve_logs(&["--listen", "127.0.0.1:0", "--upstream", "http://team:s3cret-pass@127.0.0.1:9/p"], &[]);
    assert_eq!(code, None, "{logs}");
    assert!(logs.contains("toolmend serving") && logs.contains("team:***@127.0.0.1:9/p"), "{logs}");
    assert!(!logs.contains("s3cret-pass"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "no ANSI escapes when stderr is not a terminal: {logs:?}");
    let (code, logs) = serve_logs(&["--listen", "127.0.0.1:0", "--upstream", "http://team:s3cret-pass@bad host"], &[]);
    assert_eq!(code, Some(2));
    assert!(logs.contains("upstream:") && !logs.contains("s3cret-pass"), "{logs}");
}

#[test]
fn bind_and_capture_errors_print_the_os_error_once() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let (code, logs) = serve_logs(&["--listen", &address], &[]);
    assert_eq!(code, Some(2), "{logs}");
    assert_eq!(logs.matches("in use").count(), 1, "{logs}");
    assert!(logs.contains(&format!("binding {address}")), "{logs}");
    let (code, logs) = serve_logs(&["--listen", "127.0.0.1:0", "--capture", "/nonexistent-toolmend/c.jsonl"], &[]);
    assert_eq!(code, Some(2), "{logs}");
    assert_eq!(logs.matches("No such file").count(), 1, "{logs}");
}

#[test]
fn a_variable_saying_false_overrides_the_file_and_hook_typos_are_errors() {
    let dir = scratch("precedence");
    let config = dir.join("toolmend.toml");
    std::fs::write(&config, "listen = \"0.0.0.0:0\"\nallow_remote = true\n").unwrap();
    let config = config.to_str().unwrap();
    for value in ["false", "0", "no", "off"] {
        let (code, logs) = serve_logs(&["--config", config], &[("TOOLMEND_ALLOW_REMOTE", value)]);
        assert_eq!(code, Some(2), "TOOLMEND_ALLOW_REMOTE={value}: {logs}");
        assert!(logs.contains("allow_remote"), "{logs}");
    }
    let (code, logs) = serve_logs(&["--listen", "127.0.0.1:0"], &[("TOOLMEND_REDACT_INPUTS", "yes")]);
    assert_eq!(code, None, "yes is a boolean: {logs}");
    let hooks = dir.join("hooks.toml");
    std::fs::write(&hooks, "[[hooks]]\non = [\"repiared\"]\ncommand = \"true\"\n").unwrap();
    let (code, logs) = serve_logs(&["--config", hooks.to_str().unwrap(), "--listen", "127.0.0.1:0"], &[]);
    assert_eq!(code, Some(2), "{logs}");
    assert!(logs.contains("hooks[0].on: unknown event kind 'repiared'"), "{logs}");
    let _ = std::fs::remove_dir_all(&dir);
}

// --- offline -----------------------------------------------------------------------------

#[test]
fn repair_reports_a_non_utf8_line_and_a_directory_and_goes_on() {
    let dir = scratch("repair");
    let mixed = dir.join("mixed.jsonl");
    let mut bytes = b"{\"id\": \"before\", \"raw\": \"{a: 1}\"}\n".to_vec();
    bytes.extend_from_slice(b"{\"id\": \"bad\", \"raw\": \"\xff\xfe\"}\n");
    bytes.extend_from_slice(b"{\"id\": \"after\", \"raw\": \"{b: 2}\"}\n");
    std::fs::write(&mixed, bytes).unwrap();
    let later = dir.join("later.jsonl");
    std::fs::write(&later, "{\"id\": \"later\", \"raw\": \"{}\"}\n").unwrap();
    let output = toolmend(&["repair", mixed.to_str().unwrap(), dir.to_str().unwrap(), later.to_str().unwrap()], "");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let ids: Vec<String> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["before", "after", "later"], "{stderr}");
    assert!(stderr.contains(&format!("{}:2: not UTF-8", mixed.display())), "{stderr}");
    assert!(stderr.contains(&format!("{}: is a directory: skipped", dir.display())), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repair_with_a_schema_exits_non_zero_for_valid_json_that_breaks_it() {
    let dir = scratch("schema");
    let schema = dir.join("schema.json");
    std::fs::write(&schema, r#"{"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}"#)
        .unwrap();
    let schema = schema.to_str().unwrap();
    for raw in [r#""rm -rf /""#, r#"{"cmd": 5}"#, "{}"] {
        let output = toolmend(&["repair", "--schema", schema], raw);
        assert_eq!(output.status.code(), Some(1), "{raw}");
        assert!(output.stdout.is_empty(), "{raw}");
        assert!(text(&output.stderr).contains("invalid"), "{}", text(&output.stderr));
    }
    let fine = toolmend(&["repair", "--schema", schema], r#"{"cmd": "ls"}"#);
    assert_eq!(fine.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stop_reason_without_a_schema_is_an_error() {
    let output = toolmend(&["repair", "--stop-reason", "max_tokens", "fixtures/corpus/toolcalls.jsonl"], "");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--stop-reason needs --schema"), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
}

#[test]
fn a_valid_input_over_four_mib_is_valid_offline() {
    let raw = json!({"cmd": "x".repeat(5 << 20)}).to_string();
    let output = toolmend(&["repair", "-"], &format!("{}\n", json!({"id": "big", "raw": raw})));
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let line: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(line["status"], "valid");
}

fn transcript_line() -> String {
    json!({"type": "assistant", "sessionId": "s", "message": {"content": [{"type": "tool_use", "id": "t",
        "name": "x", "input": {"__unparsedToolInput": {"raw": "{a: 1}", "len": 6}}}]}})
    .to_string()
        + "\n"
}

#[test]
fn scan_does_not_follow_symlinks() {
    let dir = scratch("scan-links");
    std::fs::create_dir_all(dir.join("p/sub")).unwrap();
    std::fs::write(dir.join("p/sub/one.jsonl"), transcript_line()).unwrap();
    std::os::unix::fs::symlink("..", dir.join("p/sub/loop")).unwrap();
    let output = toolmend(&["scan", dir.to_str().unwrap(), "--json"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["files"], 1);
    assert_eq!(report["tools"]["x"]["calls"], 1);
    assert!(report["problems"].to_string().contains("symbolic link: not followed"), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scan_reports_an_unreadable_folder_and_goes_on() {
    let dir = scratch("scan-unreadable");
    std::fs::write(dir.join("top.jsonl"), transcript_line()).unwrap();
    // A folder nested past PATH_MAX cannot be opened by its path, even by root.
    let segment = "d".repeat(250);
    let script = format!("cd '{}' && for i in $(seq 20); do mkdir {segment} && cd -P {segment}; done", dir.display());
    assert!(Command::new("bash").args(["-c", &script]).status().unwrap().success());
    let output = toolmend(&["scan", dir.to_str().unwrap(), "--json"], "");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["files"], 1);
    assert!(report["problems"].to_string().contains("unreadable folder"), "{report}");
    let _ = Command::new("rm").args(["-rf", dir.to_str().unwrap()]).status();
}

fn hook_input() -> String {
    json!({"tool_calls": [{"tool_name": "x", "tool_use_id": "toolu_1",
        "tool_input": {"__unparsedToolInput": {"raw": "{\"a\": b}", "len": 8}}}]})
    .to_string()
}

#[test]
fn the_hook_gives_up_on_a_sidecar_that_never_answers_and_still_prints_its_context() {
    // Connections complete in the kernel's backlog; nothing ever answers them.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["hook", "post-tool-batch", "--report", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(hook_input().as_bytes()).unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output.unwrap()
    });
    // A guard only, far above the hook's own timeout, so a regression fails instead of hanging.
    finished.recv_timeout(Duration::from_secs(120)).expect("the hook gave up by itself");
    let output = waiter.join().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(printed["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("toolu_1"));
    assert!(text(&output.stderr).contains("reporting to"), "{}", text(&output.stderr));
    drop(silent);
}

#[test]
fn written_files_are_private() {
    let dir = scratch("modes");
    let reports = dir.join("reports.jsonl");
    let output = toolmend(&["hook", "post-tool-batch", "--report-file", reports.to_str().unwrap()], &hook_input());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(mode(&reports), 0o600);

    use std::os::unix::fs::PermissionsExt;
    let input = dir.join("in.jsonl");
    std::fs::write(&input, transcript_line()).unwrap();
    for input_mode in [0o600, 0o640] {
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(input_mode)).unwrap();
        let out = dir.join(format!("out-{input_mode:o}.jsonl"));
        let output = toolmend(&["fix-transcript", input.to_str().unwrap(), out.to_str().unwrap()], "");
        assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
        assert_eq!(mode(&out) & !input_mode, 0, "never wider than the input: {:o}", mode(&out));
        if input_mode == 0o600 {
            assert_eq!(mode(&out), 0o600);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
