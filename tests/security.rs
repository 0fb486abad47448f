//! Safe by default: where traffic may go, what is written down, and who may connect.

use serde_json::json;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use toolmend::demo::fake_upstream::{FakeUpstream, Reply};
use toolmend::demo::{seed_tools, SEED_STREAM};

const KEY: &str = "sk-ant-api03-SECRET-KEY-VALUE";
const TOKEN: &str = "oauth-SECRET-BEARER-TOKEN";
const COOKIE: &str = "session=SECRET-COOKIE";

struct Serve {
    child: Child,
    url: String,
}

impl Serve {
    fn start(upstream: &str, extra: &[&str]) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolmend"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--upstream", upstream])
            .args(extra)
            .env("TOOLMEND_LOG", "trace")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self { child, url: format!("http://127.0.0.1:{port}") };
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("toolmend serve did not start");
    }

    /// Stops the server (SIGTERM) and returns everything it logged.
    fn stop(mut self) -> (String, std::process::ExitStatus) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let status = self.child.wait().unwrap();
        let mut logs = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut logs).unwrap();
        (logs, status)
    }
}

async fn post_with_secrets(url: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .header("x-api-key", KEY)
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("cookie", COOKIE)
        .json(&json!({"model": "m", "max_tokens": 10, "stream": true, "tools": seed_tools(), "messages": []}))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_logs_events_or_captures_and_sigterm_exits_cleanly() {
    toolmend::init_tls();
    let upstream = FakeUpstream::start(Arc::new(|_| Reply::sse(SEED_STREAM, 50))).await.unwrap();
    let capture = std::env::temp_dir().join(format!("toolmend-security-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&capture);
    let serve = Serve::start(&upstream.url(), &["--capture", capture.to_str().unwrap()]);
    let _ = post_with_secrets(&serve.url).await.bytes().await.unwrap();
    let events = reqwest::get(format!("{}/events", serve.url)).await.unwrap().text().await.unwrap();
    // An unreachable upstream logs a warning: it must not carry the secrets either.
    let dead = Serve::start("http://127.0.0.1:9", &[]);
    assert_eq!(post_with_secrets(&dead.url).await.status(), 502);
    let (dead_logs, _) = dead.stop();
    let (logs, status) = serve.stop();
    assert!(status.success(), "SIGTERM exits 0: {status}");
    assert!(logs.contains("repaired tool input"), "the repair was logged: {logs}");
    assert!(dead_logs.contains("upstream request failed"), "{dead_logs}");
    let captured = std::fs::read_to_string(&capture).unwrap();
    for text in [&logs, &dead_logs, &events, &captured] {
        for secret in [KEY, TOKEN, COOKIE] {
            assert!(!text.contains(secret), "{secret} leaked into: {text}");
        }
    }
    assert_eq!(upstream.requests()[0].header("x-api-key"), Some(KEY), "the key does reach the upstream");
    let _ = std::fs::remove_file(&capture);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_comes_from_configuration_never_from_the_request() {
    let upstream = FakeUpstream::start(Arc::new(|_| Reply::json(200, &json!({"ok": true})))).await.unwrap();
    let serve = Serve::start(&upstream.url(), &[]);
    let address = serve.url.trim_start_matches("http://").to_string();
    // An absolute-form target names another server: ignored. A foreign Host header: refused
    // (DNS rebinding), see tests/hardening.rs.
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    let request =
        format!("GET http://203.0.113.9:1/v1/models?x=1 HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let seen = upstream.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/models?x=1");
    assert_ne!(seen[0].header("host"), Some("203.0.113.9:1"));
    serve.stop();
}

#[test]
fn serve_refuses_a_non_loopback_bind_and_a_bad_config_key() {
    let output =
        Command::new(env!("CARGO_BIN_EXE_toolmend")).args(["serve", "--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("allow_remote"));
    let config = std::env::temp_dir().join(format!("toolmend-bad-config-{}.toml", std::process::id()));
    std::fs::write(&config, "keepalive_seconds = \"soon\"\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_toolmend"))
        .args(["serve", "--config", config.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("keepalive_seconds"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::remove_file(&config);
}
