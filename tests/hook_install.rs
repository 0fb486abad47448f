//! `toolmend hook install` / `uninstall` on real settings files, and the real Claude Code CLI
//! (pinned in tests/e2e/) firing the installed hook on an unparsed call.

mod common;

use common::{
    claude_binary, json_lines, offline_claude_env, responder, write_mcp_config, Scratch, Sidecar, SEED_RAW, TOOL,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;
use toolmend::demo::fake_upstream::FakeUpstream;

const BEFORE: &str = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    "PostToolBatch": [{"matcher": "*", "hooks": [{"type": "command", "command": "log-batch"}]}]
  },
  "env": {"FOO": "1"}
}
"#;

/// `toolmend hook ARGS` in `project` with HOME at `home`.
fn hook(args: &[&str], project: &Path, home: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .arg("hook")
        .args(args)
        .current_dir(project)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .output()
        .unwrap()
}

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("settings.json.bak-"))
        .collect();
    found.sort();
    found
}

fn our_command(report: &str) -> String {
    format!("{} hook post-tool-batch --report {report}", env!("CARGO_BIN_EXE_toolmend"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn install_adds_exactly_one_entry_once_and_uninstall_takes_it_out() {
    let scratch = Scratch::new("hook-install");
    let (home, project) = (scratch.0.join("home"), scratch.0.join("project"));
    let settings = project.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, BEFORE).unwrap();

    let report = "http://127.0.0.1:8787";
    let output = hook(&["install", "--project", "--report", report], &project, &home);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let after = std::fs::read_to_string(&settings).unwrap();
    let mut expected: Value = serde_json::from_str(BEFORE).unwrap();
    expected["hooks"]["PostToolBatch"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": our_command(report)}]}));
    // Same keys in the same order, plus the one entry.
    assert_eq!(serde_json::from_str::<Value>(&after).unwrap().to_string(), expected.to_string());
    let saved = backups(settings.parent().unwrap());
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read_to_string(&saved[0]).unwrap(), BEFORE, "the backup is the previous file");

    let again = hook(&["install", "--project", "--report", report], &project, &home);
    assert_eq!(again.status.code(), Some(0));
    assert!(text(&again.stderr).contains("already installed"), "{}", text(&again.stderr));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), after, "installing twice changes nothing");
    assert_eq!(backups(settings.parent().unwrap()).len(), 1);

    let removed = hook(&["uninstall", "--project"], &project, &home);
    assert_eq!(removed.status.code(), Some(0), "{}", text(&removed.stderr));
    let restored: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(restored.to_string(), serde_json::from_str::<Value>(BEFORE).unwrap().to_string());
}

#[test]
fn each_scope_writes_its_own_file() {
    let scratch = Scratch::new("hook-scopes");
    let (home, project) = (scratch.0.join("home"), scratch.0.join("project"));
    std::fs::create_dir_all(&project).unwrap();
    for (flag, path) in
        [("--user", home.join(".claude/settings.json")), ("--local", project.join(".claude/settings.local.json"))]
    {
        let output = hook(&["install", flag], &project, &home);
        assert_eq!(output.status.code(), Some(0), "{flag}: {}", text(&output.stderr));
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let command = format!("{} hook post-tool-batch", env!("CARGO_BIN_EXE_toolmend"));
        assert_eq!(
            written,
            json!({"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": command}]}]}})
        );
    }
    assert!(!project.join(".claude/settings.json").exists());
    let both = hook(&["install", "--user", "--project"], &project, &home);
    assert_eq!(both.status.code(), Some(2), "one scope at a time");
}

#[test]
fn malformed_settings_exit_non_zero_and_stay_byte_identical() {
    let scratch = Scratch::new("hook-malformed");
    let (home, project) = (scratch.0.join("home"), scratch.0.join("project"));
    let settings = project.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    for malformed in ["{\"hooks\": {\"Stop\": [],\n", "{\"hooks\": {\"PostToolBatch\": {}}}\n", "[1, 2]"] {
        std::fs::write(&settings, malformed).unwrap();
        for args in [&["install", "--project"][..], &["uninstall", "--project"]] {
            let output = hook(args, &project, &home);
            let stderr = text(&output.stderr);
            assert_ne!(output.status.code(), Some(0), "{args:?} on {malformed:?}");
            assert!(stderr.contains(&settings.display().to_string()) && stderr.contains("left as it was"), "{stderr}");
            assert_eq!(std::fs::read(&settings).unwrap(), malformed.as_bytes());
            assert!(backups(settings.parent().unwrap()).is_empty());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_fires_the_installed_hook_on_an_unparsed_call() {
    // The hook reports to a running sidecar; claude talks to the API directly (no proxy).
    let reports = Sidecar::start(responder("{}")).await;
    let upstream = FakeUpstream::start(Arc::new(responder(SEED_RAW))).await.unwrap();
    let scratch = Scratch::new("hook-install-claude");
    let (home, project) = (scratch.0.join("home"), scratch.0.join("project"));
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/settings.json"), r#"{"env": {"FROM_SETTINGS": "1"}}"#).unwrap();
    let installed = hook(&["install", "--project", "--report", &reports.url], &project, &home);
    assert_eq!(installed.status.code(), Some(0), "{}", text(&installed.stderr));

    let (calls, mcp) = (scratch.0.join("calls.jsonl"), scratch.0.join("mcp.json"));
    write_mcp_config(&mcp, &calls);
    let child = tokio::process::Command::new(claude_binary())
        .args(["-p", "Search the Swedish rules.", "--mcp-config", mcp.to_str().unwrap(), "--strict-mcp-config"])
        .args(["--allowedTools", TOOL, "--max-turns", "3"])
        .current_dir(&project)
        .env_clear()
        .envs(offline_claude_env(&home))
        .env("ANTHROPIC_BASE_URL", upstream.url())
        .env("CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING", "1")
        .env("ENABLE_TOOL_SEARCH", "false")
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(180), child).await.unwrap().unwrap();

    assert!(json_lines(&calls).is_empty(), "without the sidecar the call never runs");
    let events: Value = serde_json::from_str(&reports.get("/events").await).unwrap();
    let event = events["events"].as_array().unwrap().iter().find(|e| e["kind"] == "hook_repaired").cloned();
    assert_eq!(
        event.map(|e| e["input"].clone()),
        Some(json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]})),
        "events: {events}; claude said: {}{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let bodies: Vec<String> = upstream.requests().iter().map(|r| text(&r.body)).collect();
    assert!(bodies.iter().any(|body| body.contains("The corrected input is")), "the model was told the input");
}
