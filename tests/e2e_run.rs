//! `toolmend run -- COMMAND` with the real Claude Code CLI and the real Agent SDK (pinned in
//! tests/e2e/) against a fake Messages API on loopback, and with small shell commands for the
//! environment, the signals and the exit codes.

mod common;

use common::{
    claude_binary, e2e_dir, json_lines, offline_claude_env, python, responder, summary, write_mcp_config, Scratch,
    SEED_RAW, TOOL,
};
use serde_json::json;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::Arc;
use std::time::Duration;
use toolmend::demo::fake_upstream::{FakeUpstream, RecordedRequest, Reply};

const REPAIRED: &str = r#"{"jurisdiction": "se", "terms": ["token machine payout percentage"]}"#;

/// `toolmend run ARGS` in `cwd` with only `env` set (toolmend adds its own variables).
fn toolmend_run(cwd: &Path, args: &[&str], env: &[(String, std::ffi::OsString)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolmend"));
    command
        .arg("run")
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

async fn finish(mut command: tokio::process::Command) -> Output {
    let output = command.output();
    tokio::time::timeout(Duration::from_secs(180), output).await.expect("finished in 180 s").unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The claude -p arguments for the seed's prompt with the search server.
fn claude_args(mcp_config: &Path) -> Vec<String> {
    [
        claude_binary().to_str().unwrap(),
        "-p",
        "Search the Swedish rules on token machine payout percentage.",
        "--mcp-config",
        mcp_config.to_str().unwrap(),
        "--strict-mcp-config",
        "--allowedTools",
        TOOL,
        "--max-turns",
        "3",
    ]
    .map(String::from)
    .to_vec()
}

fn offered_tool(requests: &[RecordedRequest]) -> Option<serde_json::Value> {
    requests
        .iter()
        .filter_map(RecordedRequest::json)
        .flat_map(|body| body["tools"].as_array().cloned().unwrap_or_default())
        .find(|tool| tool["name"] == TOOL)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_under_toolmend_run_reaches_the_users_base_url_and_runs_the_repaired_call() {
    let upstream = FakeUpstream::start(Arc::new(responder(SEED_RAW))).await.unwrap();
    let scratch = Scratch::new("run-claude");
    let (calls, mcp) = (scratch.0.join("calls.jsonl"), scratch.0.join("mcp.json"));
    write_mcp_config(&mcp, &calls);
    let mut env = offline_claude_env(&scratch.0.join("home"));
    // The user's own endpoint, with a path prefix: it becomes the upstream.
    env.push(("ANTHROPIC_BASE_URL".into(), format!("{}/gateway/anthropic", upstream.url()).into()));
    let args = claude_args(&mcp);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // A serve option works as in serve.
    let capture = scratch.0.join("capture.jsonl");
    let mut command_line = vec!["--capture", capture.to_str().unwrap(), "--"];
    command_line.extend(args);
    let output = finish(toolmend_run(&scratch.0, &command_line, &env)).await;

    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    let requests = upstream.requests();
    assert_eq!(
        json_lines(&calls),
        [serde_json::from_str::<serde_json::Value>(REPAIRED).unwrap()],
        "the MCP server got the repaired call; stdout: {stdout}; stderr: {stderr}; requests: {:?}",
        summary(&requests)
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("toolmend: {TOOL}: 1 repaired, 0 refused, 0 invalid\n")), "{stderr}");
    let captured = json_lines(&capture);
    assert_eq!(captured.len(), 1, "{captured:?}");
    assert_eq!((&captured[0]["status"], &captured[0]["raw"]), (&json!("repaired"), &json!(SEED_RAW)));
    let messages: Vec<&str> = requests.iter().map(|r| r.path.as_str()).filter(|p| p.contains("/v1/messages")).collect();
    assert!(
        !messages.is_empty() && messages.iter().all(|p| p.starts_with("/gateway/anthropic/v1/messages")),
        "{messages:?}"
    );
    // The two other variables reached the CLI: fine-grained streaming asked for, the MCP tool's
    // schema sent up front.
    let tool = offered_tool(&requests).expect("the MCP tool's schema is in the request");
    assert_eq!(tool["eager_input_streaming"], true, "{tool}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_parses_but_breaks_its_schema_is_counted_invalid() {
    let raw = r#"{"jurisdiction": "france", "terms": ["x"]}"#;
    let upstream = FakeUpstream::start(Arc::new(responder(raw))).await.unwrap();
    let scratch = Scratch::new("run-claude-invalid");
    let (calls, mcp) = (scratch.0.join("calls.jsonl"), scratch.0.join("mcp.json"));
    write_mcp_config(&mcp, &calls);
    let env = offline_claude_env(&scratch.0.join("home"));
    let (args, url) = (claude_args(&mcp), upstream.url());
    let mut command_line = vec!["--upstream", url.as_str(), "--"];
    command_line.extend(args.iter().map(String::as_str));
    let output = finish(toolmend_run(&scratch.0, &command_line, &env)).await;
    let stderr = text(&output.stderr);
    assert_eq!(json_lines(&calls), [serde_json::from_str::<serde_json::Value>(raw).unwrap()], "{stderr}");
    assert!(stderr.contains(&format!("toolmend: {TOOL}: 0 repaired, 0 refused, 1 invalid\n")), "{stderr}");
}

/// The fake API refuses every message with a 400 the CLI does not retry.
fn refusing_upstream() -> impl Fn(&RecordedRequest) -> Reply + Send + Sync {
    |request| {
        if request.path.contains("/v1/messages") {
            Reply::json(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}))
        } else {
            Reply::json(200, &json!({}))
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_claude_run_gives_toolmend_run_the_same_non_zero_code() {
    let upstream = FakeUpstream::start(Arc::new(refusing_upstream())).await.unwrap();
    let scratch = Scratch::new("run-claude-fails");
    let mcp = scratch.0.join("mcp.json");
    write_mcp_config(&mcp, &scratch.0.join("calls.jsonl"));
    let env = offline_claude_env(&scratch.0.join("home"));
    let args = claude_args(&mcp);

    let mut direct = tokio::process::Command::new(&args[0]);
    direct
        .args(&args[1..])
        .current_dir(&scratch.0)
        .env_clear()
        .envs(env.iter().cloned())
        .env("ANTHROPIC_BASE_URL", upstream.url())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let direct = finish(direct).await;
    let upstream_url = upstream.url();
    let mut command_line = vec!["--upstream", &upstream_url, "--"];
    command_line.extend(args.iter().map(String::as_str));
    let wrapped = finish(toolmend_run(&scratch.0, &command_line, &env)).await;

    assert_ne!(direct.status.code(), Some(0), "the CLI fails on its own: {}", text(&direct.stderr));
    assert_eq!(wrapped.status.code(), direct.status.code(), "{}", text(&wrapped.stderr));
    assert!(upstream.requests().iter().any(|r| r.path.contains("/v1/messages")), "both runs reached the API");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_sdk_under_toolmend_run_gives_its_in_process_tool_the_repaired_arguments() {
    let upstream = FakeUpstream::start(Arc::new(responder(SEED_RAW))).await.unwrap();
    let scratch = Scratch::new("run-agent-sdk");
    let mut env = offline_claude_env(&scratch.0.join("home"));
    // --upstream wins over a base URL the user had (this one would refuse connections).
    env.push(("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()));
    let (script, cli, url, python) = (e2e_dir().join("agent_sdk_check.py"), claude_binary(), upstream.url(), python());
    let args = [
        "--upstream",
        url.as_str(),
        "--",
        python.to_str().unwrap(),
        script.to_str().unwrap(),
        "-",
        cli.to_str().unwrap(),
    ];
    let output = finish(toolmend_run(&scratch.0, &args, &env)).await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let received: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        received,
        json!([serde_json::from_str::<serde_json::Value>(REPAIRED).unwrap()]),
        "{stderr}; requests: {:?}",
        summary(&upstream.requests())
    );
    assert!(stderr.contains(&format!("toolmend: {TOOL}: 1 repaired")), "{stderr}");
}

/// A shell command under `toolmend run`, with `extra` variables.
fn shell(script: &str, extra: &[(&str, &str)]) -> tokio::process::Command {
    let mut env = vec![("PATH".to_string(), std::env::var_os("PATH").unwrap_or_default())];
    env.extend(extra.iter().map(|(name, value)| (name.to_string(), value.into())));
    toolmend_run(&std::env::temp_dir(), &["--", "sh", "-c", script], &env)
}

#[tokio::test]
async fn the_command_gets_the_sidecar_and_the_users_own_values_win() {
    let script = r#"printf '%s\n' "$ANTHROPIC_BASE_URL" "$CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING" "$ENABLE_TOOL_SEARCH""#;
    let output = finish(shell(script, &[("ENABLE_TOOL_SEARCH", "true")])).await;
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("http://127.0.0.1:") && lines[0] != "http://127.0.0.1:8787", "{stdout}");
    assert_eq!(lines[1..3], ["1", "true"], "{stdout}");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
}

/// Attack round 9 R1: with HTTP_PROXY set, loopback traffic to the sidecar went to the proxy.
#[tokio::test]
async fn the_command_reaches_the_sidecar_past_the_users_proxy() {
    let script = r#"printf '%s\n' "$NO_PROXY" "$no_proxy""#;
    let output = finish(shell(script, &[("HTTP_PROXY", "http://127.0.0.1:1"), ("NO_PROXY", "corp.example")])).await;
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, ["corp.example,127.0.0.1,localhost", "127.0.0.1,localhost"], "{stdout}");
}

#[tokio::test]
async fn the_exit_code_is_the_commands_or_128_plus_its_signal() {
    for (script, code) in [("exit 0", 0), ("exit 7", 7), ("kill -TERM $$", 143)] {
        let output = finish(shell(script, &[])).await;
        assert_eq!(output.status.code(), Some(code), "{script}: {}", text(&output.stderr));
        assert_eq!(text(&output.stderr), "toolmend: 0 tool calls, none needed repair\n", "{script}");
    }
    let output = finish(toolmend_run(&std::env::temp_dir(), &["--quiet", "--", "true"], &[])).await;
    assert_eq!((output.status.code(), output.stderr.as_slice()), (Some(0), &b""[..]));
}

/// Starts `script` under toolmend run, waits for it to print "ready", sends `signal` to toolmend.
async fn signal_wrapper(script: &str, signal: &str) -> Output {
    use tokio::io::AsyncBufReadExt;
    let mut child = shell(script, &[]).spawn().unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), stdout.next_line()).await.unwrap().unwrap();
    assert_eq!(first.as_deref(), Some("ready"));
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill").args([signal, &pid]).status().unwrap();
    assert!(sent.success());
    tokio::time::timeout(Duration::from_secs(30), child.wait_with_output()).await.expect("the wrapper ended").unwrap()
}

#[tokio::test]
async fn sigint_and_sigterm_to_the_wrapper_reach_the_command_and_its_code_comes_back() {
    // The command traps the signal and exits with a code of its own choosing (or, should the
    // signal never come, ends after about 30 s instead of outliving the test).
    let trapping = r#"trap 'exit 42' INT; trap 'exit 43' TERM; echo ready
        i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done"#;
    assert_eq!(signal_wrapper(trapping, "-INT").await.status.code(), Some(42));
    assert_eq!(signal_wrapper(trapping, "-TERM").await.status.code(), Some(43));
    // The command dies of it: 128 + the signal, as a shell reports it.
    assert_eq!(signal_wrapper("echo ready; exec sleep 30", "-INT").await.status.code(), Some(130));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_command_stays_in_toolmends_process_group_so_the_terminal_reaches_it() {
    let script = "cut -d' ' -f5 /proc/$$/stat; cut -d' ' -f5 /proc/$PPID/stat";
    let output = finish(shell(script, &[])).await;
    let stdout = text(&output.stdout);
    let groups: Vec<&str> = stdout.lines().collect();
    assert_eq!(groups.len(), 2, "{stdout}");
    assert_eq!(groups[0], groups[1], "the command's group is toolmend's");
}

#[tokio::test]
async fn a_sidecar_that_cannot_start_runs_nothing_and_says_why() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let marker = std::env::temp_dir().join(format!("toolmend-run-marker-{}", std::process::id()));
    let script = format!("touch '{}'", marker.display());
    let output =
        finish(toolmend_run(&std::env::temp_dir(), &["--listen", &addr, "--", "sh", "-c", &script], &[])).await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the sidecar could not start, so sh was not run") && stderr.contains(&addr), "{stderr}");
    // Attack round 9: the cause (the OS's words) was dropped.
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(!marker.exists(), "the command did not run");
}

/// Attack round 9: a stale ANTHROPIC_BASE_URL naming the sidecar's own address sent every
/// request back to it, and the 502 named nothing.
#[tokio::test]
async fn an_upstream_that_is_the_sidecar_itself_runs_nothing_and_says_so() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap().to_string();
    drop(free);
    let marker = std::env::temp_dir().join(format!("toolmend-run-loop-{}", std::process::id()));
    let script = format!("touch '{}'", marker.display());
    let env =
        [("ANTHROPIC_BASE_URL".to_string(), format!("http://localhost:{}", addr.rsplit(':').next().unwrap()).into())];
    let output =
        finish(toolmend_run(&std::env::temp_dir(), &["--listen", &addr, "--", "sh", "-c", &script], &env)).await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is this sidecar itself"), "{stderr}");
    assert!(!marker.exists(), "the command did not run");
}

/// Attack round 9 R2: SIGHUP to toolmend was not passed on, and SIGKILL left the command running.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn sighup_reaches_the_command_and_sigkill_of_toolmend_ends_it() {
    let trapping = r#"trap 'exit 44' HUP; echo ready
        i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done"#;
    assert_eq!(signal_wrapper(trapping, "-HUP").await.status.code(), Some(44));

    use tokio::io::AsyncBufReadExt;
    let mut child = shell("echo $$; exec sleep 60", &[]).spawn().unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line()).await.unwrap().unwrap().unwrap();
    let command: i32 = line.trim().parse().unwrap();
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    // The command ends once toolmend is gone (it would sleep 60 s otherwise).
    let mut gone = false;
    for _ in 0..300 {
        // A reaped process is gone; a zombie has ended too (its parent has yet to reap it).
        let state = std::fs::read_to_string(format!("/proc/{command}/stat")).unwrap_or_default();
        if state.is_empty() || state.split(' ').nth(2) == Some("Z") {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the command outlived toolmend");
}

/// Counts the SIGINTs it gets (Node, like the Claude Code CLI, sees each delivery): one second
/// after the first, prints the count and exits.
const COUNT_INTERRUPTS: &str = r#"let n = 0;
process.on("SIGINT", () => {
  if (n++ === 0) setTimeout(() => { console.log(`interrupts=${n}`); process.exit(0); }, 1000);
});
setInterval(() => {}, 1000);
console.log("ready");
"#;

#[cfg(target_os = "linux")]
#[tokio::test]
async fn ctrl_c_in_a_terminal_reaches_the_command_once() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let scratch = Scratch::new("run-ctrl-c");
    let script = scratch.0.join("count.js");
    std::fs::write(&script, COUNT_INTERRUPTS).unwrap();
    // util-linux `script` gives toolmend a terminal of its own; ^C written to it is the
    // terminal's interrupt for its foreground process group. `script` runs the command with
    // $SHELL; `exec` keeps that shell out of the group (dash would die of the ^C itself), and
    // SHELL is pinned so the test does not depend on the caller's.
    let inner = format!("exec '{}' run --quiet -- node '{}'", env!("CARGO_BIN_EXE_toolmend"), script.display());
    let mut child = tokio::process::Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("util-linux `script` is installed");
    let (mut stdin, mut stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let mut seen = String::new();
    read_until(&mut stdout, &mut seen, "ready").await;
    stdin.write_all(b"\x03").await.unwrap();
    // The rest, up to the end of the terminal's output.
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), stdout.read_to_end(&mut rest)).await;
    read.expect("the command ended within 30 s").unwrap();
    seen.push_str(&String::from_utf8_lossy(&rest));
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.unwrap().unwrap();
    assert!(seen.contains("interrupts=1\r\n"), "one Ctrl-C, one SIGINT: {seen:?}");
    assert_eq!(status.code(), Some(0), "{seen:?}");
}

/// Reads the terminal's output into `seen` until it holds `marker`.
async fn read_until(stdout: &mut tokio::process::ChildStdout, seen: &mut String, marker: &str) {
    use tokio::io::AsyncReadExt;
    let mut buffer = [0u8; 256];
    while !seen.contains(marker) {
        let read = tokio::time::timeout(Duration::from_secs(30), stdout.read(&mut buffer)).await;
        let n = read.expect("the terminal showed more within 30 s").unwrap();
        assert!(n > 0, "the terminal closed; it showed: {seen:?}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
}
