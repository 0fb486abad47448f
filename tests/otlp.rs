//! OpenTelemetry export from `toolmend serve`, configured by the standard OTEL_* variables, to a
//! loopback receiver that decodes with the official opentelemetry-proto package
//! (tests/e2e/otlp_receiver.py); and a collector that is down or stuck never holds a stream up.

mod common;

use common::{e2e_dir, python};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use toolmend::demo::fake_upstream::{FakeUpstream, Reply};
use toolmend::demo::{seed_tools, SEED_STREAM};

/// `toolmend serve` in front of a fake API that streams the seed's malformed call.
struct Serve {
    child: tokio::process::Child,
    url: String,
    _upstream: FakeUpstream,
}

impl Serve {
    async fn start(env: &[(&str, String)], extra: &[&str]) -> Self {
        toolmend::init_tls();
        let upstream = FakeUpstream::start(Arc::new(|_: &_| Reply::sse(SEED_STREAM, 64))).await.unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolmend"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--upstream", &upstream.url()])
            .args(extra)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}");
        for _ in 0..400 {
            if reqwest::get(format!("{url}/healthz")).await.is_ok() {
                return Self { child, url, _upstream: upstream };
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("toolmend serve did not start");
    }

    /// One streamed request; returns the input of the tool call the client received.
    async fn call(&self) -> Value {
        let body = json!({"model": "m", "max_tokens": 10, "stream": true, "tools": seed_tools(), "messages": []});
        let stream = reqwest::Client::new()
            .post(format!("{}/v1/messages", self.url))
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let inputs = toolmend::demo::assembled_tool_inputs(stream.as_bytes());
        serde_json::from_str(inputs.values().next().expect("a tool call")).unwrap()
    }

    async fn metric(&self, name: &str) -> f64 {
        let text = reqwest::get(format!("{}/metrics", self.url)).await.unwrap().text().await.unwrap();
        text.lines().find_map(|l| l.strip_prefix(name)?.trim().parse().ok()).unwrap_or(0.0)
    }

    async fn stop(mut self) {
        let pid = self.child.id().unwrap().to_string();
        let _ = tokio::process::Command::new("kill").args(["-TERM", &pid]).status().await;
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait()).await.expect("stopped").unwrap();
        assert!(status.success(), "{status}");
    }
}

const REPAIRED: fn() -> Value = || json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]});

/// The Python receiver; every decoded request lands in `lines`.
struct Receiver {
    port: u16,
    lines: Arc<Mutex<Vec<Value>>>,
    _child: tokio::process::Child,
}

impl Receiver {
    async fn start() -> Self {
        let mut child = tokio::process::Command::new(python())
            .arg(e2e_dir().join("otlp_receiver.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let first: Value = serde_json::from_str(&stdout.next_line().await.unwrap().unwrap()).unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = stdout.next_line().await {
                sink.lock().unwrap().push(serde_json::from_str(&line).unwrap());
            }
        });
        Self { port: first["port"].as_u64().unwrap() as u16, lines, _child: child }
    }

    async fn wait_for(&self, what: &str, found: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..600 {
            if let Some(line) = self.lines.lock().unwrap().iter().find(|l| found(l)) {
                return line.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no {what} arrived; got {:?}", self.lines.lock().unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_a_log_record_per_event_reach_the_collector() {
    let receiver = Receiver::start().await;
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{}", receiver.port)),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-fleet-token=abc%20123".into()),
        ("OTEL_SERVICE_NAME", "agents-ci".into()),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=tools".into()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200".into()),
    ];
    let serve = Serve::start(&env, &[]).await;
    assert_eq!(serve.call().await, REPAIRED());

    let logs = receiver
        .wait_for("repaired log record", |l| {
            l["signal"] == "logs"
                && l["records"].as_array().unwrap().iter().any(|r| r["attributes"]["outcome"] == "repaired")
        })
        .await;
    let record = logs["records"].as_array().unwrap().iter().find(|r| r["attributes"]["outcome"] == "repaired").unwrap();
    let attributes = &record["attributes"];
    assert_eq!(record["body"], "repaired");
    assert_eq!(attributes["tool"], "search");
    assert_eq!(attributes["kind"], "repaired");
    assert_eq!(attributes["edits"][0]["kind"], "bare_list", "{attributes}");
    assert_eq!(attributes["edits"][0]["pointer"], "/terms");
    assert_eq!(attributes["edits"][0]["span"].as_array().unwrap().len(), 2);
    assert!(attributes["raw"].as_str().unwrap().contains("token machine payout percentage"));
    assert_eq!(logs["resource"]["service.name"], "agents-ci");
    assert_eq!(logs["resource"]["deployment.environment"], "test");
    assert_eq!(logs["resource"]["team"], "tools");
    assert_eq!(logs["headers"]["x-fleet-token"], "abc 123");
    assert_eq!(logs["headers"]["content-type"], "application/x-protobuf");

    let metrics = receiver
        .wait_for("tool call metric", |l| {
            l["signal"] == "metrics"
                && l["metrics"].as_array().unwrap().iter().any(|m| m["name"] == "toolmend_tool_calls")
        })
        .await;
    let named = |name: &str| metrics["metrics"].as_array().unwrap().iter().find(|m| m["name"] == name).cloned();
    let calls = named("toolmend_tool_calls").unwrap();
    assert_eq!(calls["type"], "sum");
    assert_eq!(calls["points"][0]["attributes"], json!({"tool": "search", "outcome": "repaired"}));
    assert_eq!(calls["points"][0]["value"], 1);
    assert_eq!(named("toolmend_repair_edits").unwrap()["points"][0]["attributes"]["kind"], "bare_list");
    assert_eq!(named("toolmend_upstream_requests").unwrap()["points"][0]["attributes"]["status"], "200");
    assert_eq!(named("toolmend_otel_dropped").unwrap()["points"][0]["value"], 0);
    serve.stop().await;

    // --redact-inputs holds for the export too.
    let mut env = env.to_vec();
    env[2].1 = "agents-redacted".into();
    let redacted = Serve::start(&env, &["--redact-inputs"]).await;
    assert_eq!(redacted.call().await, REPAIRED());
    let logs = receiver
        .wait_for("redacted log record", |l| {
            l["resource"]["service.name"] == "agents-redacted" && l["signal"] == "logs"
        })
        .await;
    let attributes = &logs["records"][0]["attributes"];
    assert_eq!(attributes["outcome"], "repaired");
    assert_eq!(attributes["edits"][0]["kind"], "bare_list");
    for field in ["raw", "input", "sent"] {
        assert!(attributes.get(field).is_none(), "{field} was exported: {attributes}");
    }
    redacted.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_collector_down_streams_pass_and_dropped_records_are_counted() {
    // A port nothing listens on: every export is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{closed}"))];
    let serve = Serve::start(&env, &[]).await;
    for _ in 0..3 {
        assert_eq!(serve.call().await, REPAIRED());
    }
    for _ in 0..400 {
        if serve.metric("toolmend_otel_dropped_total").await >= 3.0 {
            return serve.stop().await;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("toolmend_otel_dropped_total stayed at {}", serve.metric("toolmend_otel_dropped_total").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_collector_fills_the_queue_and_streams_do_not_wait_for_it() {
    // Accepts connections and never answers.
    let stuck = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let config = std::env::temp_dir().join(format!("toolmend-otlp-stuck-{}.toml", std::process::id()));
    std::fs::write(&config, "[otel]\nqueue_capacity = 1\n").unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{}", stuck.local_addr().unwrap())),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "10000".into()),
    ];
    let serve = Serve::start(&env, &["--config", config.to_str().unwrap()]).await;
    // At most one record hangs in the export and one waits in the queue: of five, at least
    // three are dropped as they are made, while the export still hangs (an unbounded queue
    // would show 0 here).
    for _ in 0..5 {
        assert_eq!(serve.call().await, REPAIRED());
    }
    let dropped = serve.metric("toolmend_otel_dropped_total").await;
    assert!(dropped >= 3.0, "dropped {dropped}");
    let _ = std::fs::remove_file(&config);
    serve.stop().await;
}

#[test]
fn a_bad_otel_setting_stops_serve_with_an_error_that_names_it() {
    for (variable, value, says) in [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported"),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "ftp://collector",
            "OTEL_EXPORTER_OTLP_ENDPOINT / [otel] endpoint: 'ftp://collector'",
        ),
        ("OTEL_EXPORTER_OTLP_HEADERS", "token", "OTEL_EXPORTER_OTLP_HEADERS: 'token' is not key=value"),
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolmend"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env(variable, value)
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                if variable == "OTEL_EXPORTER_OTLP_ENDPOINT" { value } else { "http://127.0.0.1:1" },
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{variable}: {stderr}");
        assert!(stderr.contains(says), "{variable}: {stderr}");
    }
}
