//! The sidecar end to end on loopback: a scripted fake Messages API behind the real proxy.

use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolmend::demo::fake_upstream::{FakeUpstream, RecordedRequest, Reply};
use toolmend::demo::{assembled_tool_inputs, seed_tools, SEED_STREAM};
use toolmend::proxy::{App, Config, Server};

struct Harness {
    upstream: FakeUpstream,
    proxy: String,
    app: Arc<App>,
    stop: CancellationToken,
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(
    reply: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    tweak: impl FnOnce(&mut Config),
) -> Harness {
    let upstream = FakeUpstream::start(Arc::new(reply)).await.unwrap();
    let mut config = Config { listen: "127.0.0.1:0".parse().unwrap(), upstream: upstream.url(), ..Config::default() };
    tweak(&mut config);
    let server = Server::bind(config).await.unwrap();
    let proxy = format!("http://{}", server.local_addr());
    let app = server.app();
    let stop = CancellationToken::new();
    tokio::spawn(server.run(stop.clone()));
    Harness { upstream, proxy, app, stop }
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/sse/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn messages_request() -> Value {
    json!({"model": "m", "max_tokens": 100, "stream": true, "tools": seed_tools(),
           "messages": [{"role": "user", "content": "hi"}]})
}

async fn post_messages(proxy: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{proxy}/v1/messages?beta=true"))
        .header("x-api-key", "sk-ant-secret-key")
        .header("authorization", "Bearer oauth-secret-token")
        .header("accept-encoding", "gzip, deflate, br, zstd")
        .json(&messages_request())
        .send()
        .await
        .unwrap()
}

/// Reads the body until it ends or breaks; the bytes that arrived and whether it broke.
async fn read_all(response: reqwest::Response) -> (Vec<u8>, bool) {
    let mut body = response.bytes_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(_) => return (bytes, true),
        }
    }
    (bytes, false)
}

async fn get_text(url: String) -> String {
    reqwest::get(url).await.unwrap().text().await.unwrap()
}

#[tokio::test]
async fn the_seed_call_is_repaired_and_the_request_passes_unchanged() {
    let harness = start(|_| Reply::sse(SEED_STREAM, 37), |_| {}).await;
    let response = post_messages(&harness.proxy).await;
    assert_eq!(response.status(), 200);
    let (body, broke) = read_all(response).await;
    assert!(!broke);
    let repaired: Value = serde_json::from_str(&assembled_tool_inputs(&body)[&1]).unwrap();
    assert_eq!(repaired, json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));

    let seen = &harness.upstream.requests()[0];
    assert_eq!(seen.path, "/v1/messages?beta=true");
    assert_eq!(seen.json().unwrap(), messages_request());
    assert_eq!(seen.header("x-api-key"), Some("sk-ant-secret-key"));
    assert_eq!(seen.header("accept-encoding"), Some("identity"));

    let metrics = get_text(format!("{}/metrics", harness.proxy)).await;
    assert!(metrics.contains(r#"toolmend_tool_calls_total{tool="search",outcome="repaired"} 1"#), "{metrics}");
    assert!(metrics.contains(r#"toolmend_upstream_requests_total{status="200"} 1"#), "{metrics}");
    let events: Value = serde_json::from_str(&get_text(format!("{}/events", harness.proxy)).await).unwrap();
    let event = &events["events"][0];
    assert_eq!(event["kind"], "repaired");
    assert_eq!(event["tool_use_id"], "toolu_seed");
    assert_eq!(event["edits"][0]["kind"], "bare_list");
    let all = events.to_string();
    assert!(!all.contains("sk-ant-secret-key") && !all.contains("oauth-secret-token"));
}

#[tokio::test]
async fn valid_and_text_streams_are_byte_identical() {
    for name in ["valid-tool.sse", "text-only.sse", "refused-tool.sse", "max-tokens-cut.sse"] {
        let stream = fixture(name);
        let served = stream.clone();
        let harness = start(move |_| Reply::sse(&served, 50), |_| {}).await;
        let (body, _) = read_all(post_messages(&harness.proxy).await).await;
        assert_eq!(String::from_utf8(body).unwrap(), stream, "{name}");
    }
}

#[tokio::test]
async fn other_methods_paths_and_errors_pass_through() {
    let harness = start(
        |request| match request.path.ends_with("/api/hello") {
            true => Reply::json(200, &json!({})),
            false => Reply::json(
                429,
                &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
            )
            .with_header("retry-after", "7"),
        },
        |config| config.upstream.push_str("/gateway"),
    )
    .await;
    let client = reqwest::Client::new();
    let head = client.head(format!("{}/api/hello", harness.proxy)).send().await.unwrap();
    assert_eq!(head.status(), 200);
    let limited = post_messages(&harness.proxy).await;
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "7");
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_error");
    let paths: Vec<(String, String)> =
        harness.upstream.requests().iter().map(|r| (r.method.clone(), r.path.clone())).collect();
    assert_eq!(
        paths,
        [("HEAD".into(), "/gateway/api/hello".into()), ("POST".into(), "/gateway/v1/messages?beta=true".into())]
    );
}

#[tokio::test]
async fn an_upstream_cut_inside_a_held_block_delivers_every_byte_then_breaks() {
    let stream = fixture("seed-malformed.sse");
    let cut_at = stream.find("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}").unwrap();
    let sent = stream[..cut_at].to_string();
    let served = sent.clone();
    let harness = start(move |_| Reply::sse(&served, 64).cut(), |_| {}).await;
    let (body, broke) = read_all(post_messages(&harness.proxy).await).await;
    assert!(broke, "the client sees the stream break");
    assert_eq!(String::from_utf8(body).unwrap(), sent);
    // The process keeps serving.
    assert_eq!(get_text(format!("{}/healthz", harness.proxy)).await, r#"{"status":"ok","version":"0.1.0"}"#);
}

#[tokio::test]
async fn long_holds_get_keepalive_pings_and_nothing_else_changes() {
    let stream = fixture("valid-tool.sse");
    let served = stream.clone();
    let harness = start(
        move |_| Reply::sse(&served, 40).with_delay(Duration::from_millis(15)),
        |config| config.keepalive = Duration::from_millis(20),
    )
    .await;
    let (body, _) = read_all(post_messages(&harness.proxy).await).await;
    let body = String::from_utf8(body).unwrap();
    let ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    assert!(body.contains(ping), "a keep-alive ping during the hold");
    assert_eq!(body.replace(ping, ""), stream);
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_the_relay() {
    let stream = fixture("seed-malformed.sse");
    let harness = start(move |_| Reply::sse(&stream, 20).with_delay(Duration::from_millis(50)), |_| {}).await;
    let response = post_messages(&harness.proxy).await;
    let mut body = response.bytes_stream();
    let _first = body.next().await;
    drop(body);
    let mut waited = 0;
    while !harness.app.tracker.is_empty() && waited < 200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
    }
    assert!(harness.app.tracker.is_empty(), "the relay task ended");
    assert!(get_text(format!("{}/healthz", harness.proxy)).await.contains("ok"));
}

#[tokio::test]
async fn oversized_tool_input_passes_through_unchanged() {
    let harness = start(|_| Reply::sse(SEED_STREAM, 64), |config| config.max_held_bytes = 300).await;
    let (body, _) = read_all(post_messages(&harness.proxy).await).await;
    assert_eq!(String::from_utf8(body).unwrap(), SEED_STREAM);
}

#[tokio::test]
async fn an_oversized_request_body_is_refused_with_an_api_error() {
    let harness = start(|_| Reply::sse(SEED_STREAM, 64), |config| config.max_request_bytes = 100).await;
    let response = post_messages(&harness.proxy).await;
    assert_eq!(response.status(), 413);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert!(harness.upstream.requests().is_empty());
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_in_the_api_shape() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let harness = start(|_| Reply::sse("", 1), |config| config.upstream = dead).await;
    let response = post_messages(&harness.proxy).await;
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "api_error");
}

#[tokio::test]
async fn binding_a_non_loopback_address_needs_allow_remote() {
    let config = Config { listen: "0.0.0.0:0".parse().unwrap(), ..Config::default() };
    let error = Server::bind(config).await.err().expect("refused").to_string();
    assert!(error.contains("allow_remote"), "{error}");
}

#[tokio::test]
async fn the_capture_file_is_private_and_replays_offline() {
    let dir = std::env::temp_dir().join(format!("toolmend-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("capture.jsonl");
    let _ = std::fs::remove_file(&path);
    let capture = path.clone();
    let harness = start(|_| Reply::sse(SEED_STREAM, 64), move |config| config.capture = Some(capture)).await;
    let _ = read_all(post_messages(&harness.proxy).await).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-ant-secret-key"));
    let repairer = toolmend::offline::Repairer::new(Default::default());
    let mut out = Vec::new();
    repairer.run(text.as_bytes(), "capture", &mut out, &mut Vec::new()).unwrap();
    let line: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(line["id"], "toolu_seed");
    assert_eq!(line["status"], "repaired");
    assert_eq!(line["input"], json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));
    let _ = std::fs::remove_dir_all(&dir);
}

mod strict {
    use super::*;
    use toolmend::proxy::strict::{StrictConfig, StrictMode};

    fn body_with_tools() -> String {
        json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"name": "mcp__search__search", "input_schema": {"type": "object", "properties": {
                "terms": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "limit": {"type": "integer", "maximum": 50}}, "required": ["terms"]}},
            {"name": "open_map", "input_schema": {"type": "object", "additionalProperties": {"type": "string"}}},
            {"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}
        ]})
        .to_string()
    }

    async fn post(proxy: &str, body: &str) -> reqwest::Response {
        reqwest::Client::new()
            .post(format!("{proxy}/v1/messages"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn chosen_compatible_tools_arrive_strict_and_normalized_the_rest_untouched() {
        let harness = start(
            |_| Reply::sse(SEED_STREAM, 64),
            |config| {
                config.strict = StrictConfig {
                    tools: vec!["mcp__search__*".into(), "open_map".into()],
                    beta: Some("structured-outputs-2025-12-15".into()),
                    ..StrictConfig::default()
                }
            },
        )
        .await;
        let body = body_with_tools();
        let _ = read_all(post(&harness.proxy, &body).await).await;
        let seen = &harness.upstream.requests()[0];
        let sent: Value = seen.json().unwrap();
        let original: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(sent["tools"][0]["strict"], true);
        assert_eq!(
            sent["tools"][0]["input_schema"],
            json!({"type": "object", "properties": {
                "terms": {"type": "array", "items": {"type": "string"}, "description": "{\"minItems\":2}"},
                "limit": {"type": "integer", "description": "{\"maximum\":50}"}},
                "required": ["terms"], "additionalProperties": false})
        );
        assert_eq!(sent["tools"][1], original["tools"][1], "open additionalProperties: not injected");
        assert_eq!(sent["tools"][2], original["tools"][2], "not configured");
        assert_eq!(sent["messages"], original["messages"]);
        assert_eq!(seen.header("anthropic-beta"), Some("structured-outputs-2025-12-15"));
        let events = get_text(format!("{}/events", harness.proxy)).await;
        assert!(events.contains("strict_injected") && events.contains("strict_skipped"), "{events}");
        assert!(events.contains("additionalProperties other than false"), "{events}");
        let metrics = get_text(format!("{}/metrics", harness.proxy)).await;
        assert!(metrics.contains(r#"toolmend_strict_tools_total{result="injected"} 1"#), "{metrics}");
    }

    #[tokio::test]
    async fn a_400_blaming_the_schema_reissues_the_original_once_and_later_requests_skip_injection() {
        let harness = start(
            |request| {
                if String::from_utf8_lossy(&request.body).contains("\"strict\":true") {
                    Reply::json(
                        400,
                        &json!({"type": "error", "error": {"type": "invalid_request_error",
                        "message": "Schema is too complex for compilation"}}),
                    )
                } else {
                    Reply::sse(SEED_STREAM, 64)
                }
            },
            |config| config.strict = StrictConfig { mode: Some(StrictMode::Compatible), ..StrictConfig::default() },
        )
        .await;
        let body = body_with_tools();
        for _ in 0..2 {
            let response = post(&harness.proxy, &body).await;
            assert_eq!(response.status(), 200);
            let _ = read_all(response).await;
        }
        let bodies: Vec<String> =
            harness.upstream.requests().iter().map(|r| String::from_utf8(r.body.clone()).unwrap()).collect();
        assert_eq!(bodies.len(), 3, "injected, fallback, then no injection");
        assert!(bodies[0].contains("\"strict\":true"));
        assert_eq!(bodies[1], body, "the fallback is the original, byte-identical");
        assert_eq!(bodies[2], body);
        let events = get_text(format!("{}/events", harness.proxy)).await;
        assert!(events.contains("strict_rejected") && events.contains("too complex"), "{events}");
    }

    #[tokio::test]
    async fn other_400s_reach_the_client_unchanged() {
        let harness = start(
            |_| Reply::json(400, &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too big"}})),
            |config| config.strict = StrictConfig { mode: Some(StrictMode::Compatible), ..StrictConfig::default() },
        )
        .await;
        let response = post(&harness.proxy, &body_with_tools()).await;
        assert_eq!(response.status(), 400);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["message"], "max_tokens: too big");
        assert_eq!(harness.upstream.requests().len(), 1);
    }
}

mod reporting {
    use super::*;
    use toolmend::proxy::hooks::HookConfig;

    #[tokio::test]
    async fn metrics_parse_as_prometheus_text() {
        let harness = start(|_| Reply::sse(SEED_STREAM, 64), |_| {}).await;
        let _ = read_all(post_messages(&harness.proxy).await).await;
        let text = get_text(format!("{}/metrics", harness.proxy)).await;
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = prometheus_parse::Scrape::parse(lines).expect("Prometheus text format");
        let repaired = scrape
            .samples
            .iter()
            .find(|s| s.metric == "toolmend_tool_calls_total" && s.labels.get("outcome") == Some("repaired"))
            .expect("the repaired call is counted");
        // OpenMetrics names the family without `_total`, so the parser may leave it untyped.
        assert!(
            matches!(repaired.value, prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Untyped(v) if v == 1.0)
        );
        for name in
            ["toolmend_build_info", "toolmend_overhead_seconds_count", "toolmend_request_duration_seconds_count"]
        {
            assert!(scrape.samples.iter().any(|s| s.metric == name), "{name} in {text}");
        }
    }

    #[tokio::test]
    async fn events_leave_inputs_out_when_redacted() {
        let harness = start(|_| Reply::sse(SEED_STREAM, 64), |config| config.redact_inputs = true).await;
        let _ = read_all(post_messages(&harness.proxy).await).await;
        let events: Value = serde_json::from_str(&get_text(format!("{}/events", harness.proxy)).await).unwrap();
        let event = &events["events"][0];
        assert_eq!(event["kind"], "repaired");
        assert!(event["raw"].is_null() && event["input"].is_null(), "{event}");
        assert!(!events.to_string().contains("token machine"));
        let later: Value = serde_json::from_str(&get_text(format!("{}/events?since=1", harness.proxy)).await).unwrap();
        assert_eq!(later["events"], json!([]));
    }

    #[tokio::test]
    async fn hook_commands_get_the_event_json_and_failures_are_counted() {
        let out = std::env::temp_dir().join(format!("toolmend-hook-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&out);
        let command = format!("cat > '{}'", out.display());
        let harness = start(
            |_| Reply::sse(SEED_STREAM, 64),
            |config| {
                config.hooks = vec![
                    HookConfig { on: vec!["repaired".into()], command, timeout_seconds: 10 },
                    HookConfig { on: vec!["repaired".into()], command: "exit 3".into(), timeout_seconds: 10 },
                    HookConfig { on: vec!["refused".into()], command: "touch /never".into(), timeout_seconds: 10 },
                ]
            },
        )
        .await;
        let _ = read_all(post_messages(&harness.proxy).await).await;
        let mut metrics = String::new();
        for _ in 0..100 {
            metrics = get_text(format!("{}/metrics", harness.proxy)).await;
            if metrics.contains(r#"toolmend_hook_runs_total{result="ok"} 1"#)
                && metrics.contains(r#"result="failed"} 1"#)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(metrics.contains(r#"toolmend_hook_runs_total{result="ok"} 1"#), "{metrics}");
        assert!(metrics.contains(r#"toolmend_hook_runs_total{result="failed"} 1"#), "{metrics}");
        let event: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(event["kind"], "repaired");
        assert_eq!(event["tool_use_id"], "toolu_seed");
        let _ = std::fs::remove_file(&out);
    }
}

/// A sidecar on `workers` threads in front of an upstream that sends the seed stream in
/// `chunk`-byte pieces, `delay` apart; its stop token and its running server.
struct SlowSidecar {
    _upstream: FakeUpstream,
    proxy: String,
    stop: CancellationToken,
    running: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn slow_sidecar(chunk: usize, delay: Duration, workers: usize) -> SlowSidecar {
    let upstream =
        FakeUpstream::start(Arc::new(move |_| Reply::sse(SEED_STREAM, chunk).with_delay(delay))).await.unwrap();
    let config =
        Config { listen: "127.0.0.1:0".parse().unwrap(), upstream: upstream.url(), workers, ..Config::default() };
    let server = Server::bind(config).await.unwrap();
    let proxy = format!("http://{}", server.local_addr());
    let stop = CancellationToken::new();
    let running = tokio::spawn(server.run(stop.clone()));
    SlowSidecar { _upstream: upstream, proxy, stop, running }
}

/// The seed call came through whole and repaired.
fn assert_seed_repaired(body: &[u8]) {
    let repaired: Value = serde_json::from_str(&assembled_tool_inputs(body)[&1]).unwrap();
    assert_eq!(repaired, json!({"jurisdiction": "se", "terms": ["token machine payout percentage"]}));
}

#[tokio::test]
async fn shutdown_lets_open_streams_finish_then_stops_accepting() {
    let sidecar = slow_sidecar(200, Duration::from_millis(30), Config::default().workers).await;
    let response = post_messages(&sidecar.proxy).await;
    sidecar.stop.cancel();
    let (body, broke) = read_all(response).await;
    assert!(!broke, "the open stream finished");
    assert_seed_repaired(&body);
    sidecar.running.await.unwrap().unwrap();
    assert!(reqwest::get(format!("{}/healthz", sidecar.proxy)).await.is_err(), "no longer accepting");
}

#[tokio::test]
async fn every_worker_lets_its_open_streams_finish_at_shutdown() {
    let sidecar = slow_sidecar(100, Duration::from_millis(20), 3).await;
    // Nine connections at once (a client each), spread over the workers as they accept them.
    let responses = futures_util::future::join_all((0..9).map(|_| post_messages(&sidecar.proxy))).await;
    sidecar.stop.cancel();
    for response in responses {
        let (body, broke) = read_all(response).await;
        assert!(!broke, "an open stream finished");
        assert_seed_repaired(&body);
    }
    sidecar.running.await.unwrap().unwrap();
    assert!(reqwest::get(format!("{}/healthz", sidecar.proxy)).await.is_err(), "no longer accepting");
}

#[tokio::test]
async fn a_server_dropped_mid_stream_takes_its_workers_and_their_streams_along() {
    // About 7 s of stream if nothing ends it.
    let sidecar = slow_sidecar(20, Duration::from_millis(100), 2).await;
    let response = post_messages(&sidecar.proxy).await;
    sidecar.running.abort();
    let (body, broke) = read_all(response).await;
    assert!(broke, "the stream ended with its server (after {} of {} bytes)", body.len(), SEED_STREAM.len());
}

/// A client that builds tool input like the TypeScript SDK: each frame's data parsed as
/// JavaScript does (strings are UTF-16, a lone surrogate is kept), every `partial_json` of a
/// block appended, the whole decoded at the end.
mod typescript_like_client {
    use serde::Deserialize;
    use serde_json::value::RawValue;
    use std::collections::BTreeMap;

    #[derive(Deserialize)]
    struct Data<'a> {
        #[serde(default)]
        index: u64,
        #[serde(borrow)]
        delta: Option<Delta<'a>>,
    }

    #[derive(Deserialize)]
    struct Delta<'a> {
        #[serde(rename = "type", default)]
        kind: String,
        #[serde(borrow)]
        partial_json: Option<&'a RawValue>,
    }

    /// A JSON string literal as UTF-16 code units, the way `JSON.parse` keeps them.
    fn utf16_units(literal: &str) -> Vec<u16> {
        let mut units = Vec::new();
        let mut chars = literal[1..literal.len() - 1].chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                units.extend_from_slice(c.encode_utf16(&mut [0; 2]));
                continue;
            }
            let unit = match chars.next().unwrap() {
                'u' => u16::from_str_radix(&chars.by_ref().take(4).collect::<String>(), 16).unwrap(),
                'n' => 0x0a,
                't' => 0x09,
                'r' => 0x0d,
                'b' => 0x08,
                'f' => 0x0c,
                other => other as u16,
            };
            units.push(unit);
        }
        units
    }

    pub fn tool_inputs(stream: &str) -> BTreeMap<u64, String> {
        let mut inputs: BTreeMap<u64, Vec<u16>> = BTreeMap::new();
        for frame in stream.split("\n\n") {
            let Some(data) = frame.lines().find_map(|line| line.strip_prefix("data: ")) else { continue };
            let data: Data = serde_json::from_str(data).unwrap();
            if let Some(Delta { kind, partial_json: Some(piece) }) = data.delta {
                if kind == "input_json_delta" {
                    inputs.entry(data.index).or_default().extend(utf16_units(piece.get()));
                }
            }
        }
        inputs.into_iter().map(|(index, units)| (index, String::from_utf16(&units).unwrap())).collect()
    }
}

#[tokio::test]
async fn a_surrogate_pair_split_over_two_deltas_reaches_a_typescript_client_as_sent() {
    let recorded = fixture("valid-tool.sse");
    let first_delta =
        recorded.find("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1").unwrap();
    let stop = recorded.find("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}").unwrap();
    for pieces in [
        [r#"{\"jurisdiction\": \"se\", "#, r#"\"terms\": [\"smile \ud83d"#, r#"\ude00\"]}"#],
        [r#"{\"jurisdiction\": \"se\", "#, r#"\"terms\": smile \ud83d"#, r#"\ude00 payout}"#],
    ] {
        let deltas: String = pieces
            .iter()
            .map(|piece| {
                format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{piece}\"}}}}\n\n")
            })
            .collect();
        let stream = format!("{}{deltas}{}", &recorded[..first_delta], &recorded[stop..]);
        let served = stream.clone();
        let harness = start(move |_| Reply::sse(&served, 23), |_| {}).await;
        let (body, _) = read_all(post_messages(&harness.proxy).await).await;
        let received = typescript_like_client::tool_inputs(&String::from_utf8(body).unwrap());
        let sent = typescript_like_client::tool_inputs(&stream);
        assert!(sent[&1].contains("smile \u{1f600}"), "{sent:?}");
        assert_eq!(received, sent, "{pieces:?}");
    }
}

#[tokio::test]
async fn a_request_without_readable_tools_is_forwarded_unchanged_and_its_stream_untouched() {
    let tools = seed_tools().to_string();
    let bodies = [
        String::new(),
        "not JSON at all {".to_string(),
        r#"{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}"#.to_string(),
        format!(r#"{{"model": "m", "messages": [], "tools": {tools}"#),
        r#"{"model": "m", "messages": [], "tools": {"name": "search"}}"#.to_string(),
        r#"{"model": "m", "messages": [], "tools": [1, "search", {"name": "search"}]}"#.to_string(),
        format!(r#"{{"model": "m", "tools": [], "messages": [], "tools": {tools}}}"#),
    ];
    // The seed's stream would be repaired for a request that declares the seed's tool.
    let harness = start(|_| Reply::sse(SEED_STREAM, 37), |_| {}).await;
    for body in &bodies {
        let response = reqwest::Client::new()
            .post(format!("{}/v1/messages", harness.proxy))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        let (received, broke) = read_all(response).await;
        assert!(!broke, "{body}");
        assert_eq!(String::from_utf8(received).unwrap(), SEED_STREAM, "{body}");
        let seen = harness.upstream.requests().pop().unwrap();
        assert_eq!(seen.body, body.as_bytes(), "{body}");
        if !body.is_empty() {
            assert_eq!(seen.header("content-length"), Some(body.len().to_string().as_str()), "framed as sent");
        }
        assert_eq!(seen.header("transfer-encoding"), None);
    }
    let metrics = get_text(format!("{}/metrics", harness.proxy)).await;
    assert!(!metrics.contains(r#"outcome="repaired""#), "{metrics}");
}

#[tokio::test]
async fn an_encoded_or_misnamed_event_stream_passes_through_unread() {
    // The seed's stream is repaired when it comes plain; gzip bytes cannot be read as frames,
    // and `text/event-streamx` is another media type (attack round 21).
    for (name, value) in
        [("content-encoding", "gzip"), ("content-encoding", "br"), ("content-type", "text/event-streamx")]
    {
        let reply = move |_: &RecordedRequest| {
            let mut reply = Reply::sse(SEED_STREAM, 37);
            reply.headers.retain(|(held, _)| held != name);
            reply.with_header(name, value)
        };
        let harness = start(reply, |_| {}).await;
        let response = post_messages(&harness.proxy).await;
        assert_eq!(response.headers().get(name).map(|v| v.to_str().unwrap()), Some(value));
        let (received, broke) = read_all(response).await;
        assert!(!broke);
        assert_eq!(String::from_utf8(received).unwrap(), SEED_STREAM, "{name}: {value}");
    }
}

#[tokio::test]
async fn a_redirect_from_the_upstream_reaches_the_client_as_it_came() {
    // A proxy that followed it would send the call somewhere else (and a 303 as a GET).
    for status in [301u16, 302, 303, 307, 308] {
        let harness = start(
            move |request| match request.path.contains("elsewhere") {
                true => Reply::json(200, &json!({"followed": true})),
                false => Reply::json(status, &json!({})).with_header("location", "/elsewhere"),
            },
            |_| {},
        )
        .await;
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let url = format!("{}/v1/messages?beta=true", harness.proxy);
        let response = client.post(url).json(&messages_request()).send().await.unwrap();
        assert_eq!(response.status().as_u16(), status);
        assert_eq!(response.headers()["location"], "/elsewhere");
        assert_eq!(harness.upstream.requests().len(), 1, "the redirect was not followed ({status})");
    }
}

/// A stream calling the seed's `search` tool with `input` cut into deltas of `piece` bytes.
fn search_call_stream(input: &str, piece: usize) -> String {
    let frame = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut stream = frame(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_big", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    );
    stream += &frame(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_big", "name": "search", "input": {}}}),
    );
    for part in input.as_bytes().chunks(piece) {
        let part = std::str::from_utf8(part).unwrap();
        stream += &frame(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": part}}),
        );
    }
    stream += &frame("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    stream += &frame(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 9}}),
    );
    stream + &frame("message_stop", json!({"type": "message_stop"}))
}

#[tokio::test]
async fn a_large_held_input_is_repaired_off_the_worker_thread_as_it_is_inline() {
    // Past 64 KiB held, the chunk that resolves the block is fed on the blocking pool; the
    // client gets the same repair as for a small input.
    let terms = "token machine payout percentage ".repeat(3000);
    let input: &'static str =
        Box::leak(format!("{{\"jurisdiction\": \"se\", \"terms\": {}}}", terms.trim_end()).into_boxed_str());
    let stream: &'static str = Box::leak(search_call_stream(input, 1000).into_boxed_str());
    let harness = start(move |_| Reply::sse(stream, 4096), |_| {}).await;
    let (body, broke) = read_all(post_messages(&harness.proxy).await).await;
    assert!(!broke);
    let repaired: Value = serde_json::from_str(&assembled_tool_inputs(&body)[&0]).unwrap();
    assert_eq!(repaired, json!({"jurisdiction": "se", "terms": [terms.trim_end()]}));
    let metrics = get_text(format!("{}/metrics", harness.proxy)).await;
    assert!(metrics.contains(r#"toolmend_tool_calls_total{tool="search",outcome="repaired"} 1"#), "{metrics}");
}

#[tokio::test]
async fn a_body_whose_chunked_framing_breaks_gets_a_400_not_a_413() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let harness = start(|_| Reply::sse(SEED_STREAM, 64), |_| {}).await;
    let address = harness.proxy.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("could not be read"), "{answer}");
    assert!(harness.upstream.requests().is_empty(), "nothing went upstream");
}
