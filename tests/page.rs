//! The live page at `GET /`: what the sidecar serves, and the page itself in a real browser
//! (Debian's chromium driven by Selenium, tests/e2e/page_check.py). In CI (`CI=true`) a missing
//! browser fails the test; elsewhere it is skipped with a note.
//! `TOOLMEND_PAGE_SCREENSHOT=docs/page.png` also saves the README's screenshot (docs/page.sh).

mod common;

use common::{e2e_dir, python, Sidecar};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use toolmend::demo::fake_upstream::{RecordedRequest, Reply};
use toolmend::demo::script::{text_message, tool_message};
use toolmend::proxy::strict::StrictConfig;

/// Streams the request's user message as the input of a call to the first offered tool.
fn echo_upstream() -> impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static {
    let counter = AtomicU64::new(0);
    move |request| {
        let body = request.json().unwrap_or_default();
        let (Some(tool), Some(raw)) = (body["tools"][0]["name"].as_str(), body["messages"][0]["content"].as_str())
        else {
            return Reply::sse(text_message("No tool offered."), 97);
        };
        let id = format!("toolu_page_{}", counter.fetch_add(1, Ordering::Relaxed) + 1);
        Reply::sse(tool_message(&id, tool, raw, 13), 97)
    }
}

fn browser_installed() -> bool {
    let found = |name: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
    };
    found("chromium") && found("chromedriver")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_is_served_from_the_binary_and_head_still_goes_upstream() {
    let sidecar = Sidecar::start(echo_upstream()).await;
    let page = reqwest::get(format!("{}/", sidecar.url)).await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(policy.contains("script-src 'self'") && policy.contains("default-src 'none'"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains(r#"<script src="/page.js" defer></script>"#), "{html}");
    assert!(!html.contains("http://") && !html.contains("https://"), "no external resources");
    let script = sidecar.get("/page.js").await;
    assert!(script.contains("new TextEncoder()"));
    assert!(!script.contains("innerHTML"), "the page never parses data as HTML");
    assert!(sidecar.get("/page.css").await.contains("mark.edit"));

    let head = reqwest::Client::new().head(format!("{}/", sidecar.url)).send().await.unwrap();
    assert_eq!(head.status(), 200);
    let post = reqwest::Client::new().post(format!("{}/", sidecar.url)).body("x").send().await.unwrap();
    assert_eq!(post.status(), 200);
    let forwarded: Vec<String> =
        sidecar.upstream.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    assert_eq!(forwarded, ["HEAD /", "POST /"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_browser_shows_calls_spans_and_updates_without_a_reload() {
    if !browser_installed() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "chromium and chromedriver are required in CI");
        eprintln!("skipped: chromium and chromedriver are not installed (tests/e2e/setup.sh installs them)");
        return;
    }
    let strict = StrictConfig { tools: vec!["mcp__*".into()], ..StrictConfig::default() };
    let sidecar = Sidecar::start_with(echo_upstream(), |config| config.strict = strict).await;
    let redacted = Sidecar::start_with(echo_upstream(), |config| config.redact_inputs = true).await;
    let script = e2e_dir().join("page_check.py");
    let mut command = tokio::process::Command::new(python());
    command.arg(&script).arg(&sidecar.url).arg(&redacted.url).kill_on_drop(true);
    if let Some(path) = std::env::var_os("TOOLMEND_PAGE_SCREENSHOT") {
        command.arg("--screenshot").arg(path);
    }
    let output =
        tokio::time::timeout(Duration::from_secs(180), command.output()).await.expect("done in 180 s").unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "page_check.py failed: {stderr}\nstdout: {stdout}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let page = &result["page"];

    assert_eq!(page["listed"], serde_json::json!(["repaired", "repaired", "refused", "invalid"]));
    let highlights = page["highlights"].as_array().unwrap();
    let bare_list = highlights.iter().find(|h| h["kind"] == "bare_list").expect("the bare list is highlighted");
    assert_eq!(bare_list["text"], "token machine, payout percentage");
    assert_eq!(page["script_nodes"], 0, "no element was made from the input");
    assert_eq!(page["pwned"], "undefined", "the input's script never ran");
    assert_eq!(page["counts"]["repaired"], 2);
    assert_eq!(page["counts"]["refused"], 1);
    assert_eq!(page["counts"]["invalid"], 0, "a reported call is not a stream's call");
    assert_eq!(page["counts"]["valid"], 1);
    assert_eq!(page["counts"]["calls"], 4);
    assert_eq!(page["invalid_badge"], "invalid");
    assert!(page["invalid_reason"].as_str().unwrap().contains("is not of type"), "{page}");
    assert!(page["strict"].as_array().unwrap().iter().any(|s| s.as_str().unwrap().contains(common::TOOL)), "{page}");
    assert_eq!(page["same_page"], true, "the new call arrived without a reload");

    let redacted = &result["redacted"];
    assert_eq!(redacted["outcome"], "repaired");
    assert_eq!(redacted["hidden_note"], true);
    assert_eq!(redacted["raw_shown"], false);
}
