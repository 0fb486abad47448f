//! Attack round 7's HTTP-level and resource findings, closed: the capture file and planted
//! links (K2), schema caches bounded by bytes (D4), headers named in `Connection` (H1), path
//! segments other servers read as `..` (H3), cross-site browser requests (H2), slow bodies and
//! the connection cap (D2).

mod common;

use common::Sidecar;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use toolmend::demo::fake_upstream::Reply;
use toolmend::proxy::{App, Config};

fn ok_reply() -> impl Fn(&toolmend::demo::fake_upstream::RecordedRequest) -> Reply + Send + Sync + 'static {
    |_| Reply::json(200, &json!({"ok": true}))
}

fn address(sidecar: &Sidecar) -> String {
    sidecar.url.trim_start_matches("http://").to_string()
}

/// Sends `head` (then `body`) on a fresh connection and reads until the server closes it.
/// The read timeout only keeps a broken server from hanging the test.
fn exchange(addr: &str, head: &str, body: &[u8]) -> String {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    // A connection the server closes at once may refuse the write; the answer says what happened.
    let _ = tcp.write_all(head.as_bytes()).and_then(|()| tcp.write_all(body));
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fn post(addr: &str, path: &str, extra: &str) -> String {
    let body = r#"{"model": "m", "max_tokens": 1, "messages": []}"#;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        body.len()
    );
    exchange(addr, &head, body.as_bytes())
}

#[cfg(unix)]
#[tokio::test]
async fn k2_a_capture_path_that_is_a_symbolic_link_is_refused_at_start_and_its_target_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = common::Scratch::new("round7-capture-link");
    let victim = scratch.0.join("victim_rc");
    std::fs::write(&victim, "# the user's shell rc\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = scratch.0.join("calls.jsonl");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let config = Config { capture: Some(link.clone()), ..Config::default() };
    let error = App::new(config).err().expect("a capture path that is a link is refused");
    let shown = format!("{error}: {}", std::error::Error::source(&error).map(ToString::to_string).unwrap_or_default());
    assert!(shown.contains(&link.display().to_string()) && shown.contains("symbolic link"), "{shown}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "# the user's shell rc\n");
    assert_eq!(std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o644, "the target is not chmodded");
}

#[tokio::test]
async fn d4_the_schema_caches_keep_at_most_schema_cache_bytes() {
    const BOUND: usize = 1 << 20;
    let app = App::new(Config { schema_cache_bytes: BOUND, ..Config::default() }).unwrap();
    let tools = |n: usize, size: usize| {
        let description = "d".repeat(size);
        json!([{"name": format!("t{n}"), "input_schema": {"type": "object", "description": description}}]).to_string()
    };
    for n in 0..40 {
        assert!(app.schemas.catalog_for_text(tools(n, 200 << 10).as_bytes()).is_some());
        // Three caches (catalog texts, schema texts, compiled schemas), each within the bound.
        assert!(app.schemas.kept_bytes() <= 3 * BOUND, "after {n}: {} bytes kept", app.schemas.kept_bytes());
    }
    let kept = app.schemas.kept_bytes();
    let huge = tools(99, 2 * BOUND);
    let catalog = app.schemas.catalog_for_text(huge.as_bytes()).expect("used for its request");
    assert!(catalog.get("t99").is_some());
    assert_eq!(app.schemas.kept_bytes(), kept, "a tools text over the bound is not kept");
}

#[tokio::test]
async fn h1_headers_named_in_connection_do_not_reach_the_upstream() {
    let sidecar = Sidecar::start(ok_reply()).await;
    let addr = address(&sidecar);
    let answer = tokio::task::spawn_blocking(move || {
        let body = r#"{"model": "m", "max_tokens": 1, "messages": []}"#;
        let head = format!(
            "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\nConnection: close, X-Hop-Secret\r\n\
             X-Hop-Secret: internal-token\r\nX-Kept: yes\r\n\r\n",
            body.len()
        );
        exchange(&addr, &head, body.as_bytes())
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let requests = sidecar.upstream.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("x-kept"), Some("yes"));
    assert_eq!(requests[0].header("x-hop-secret"), None, "a header named in Connection is hop-by-hop");
}

#[tokio::test]
async fn h3_segments_other_servers_read_as_dot_dot_are_refused() {
    let sidecar =
        Sidecar::start_with(ok_reply(), |config| config.upstream = format!("{}/gw/team-a", config.upstream)).await;
    let addr = address(&sidecar);
    for path in [
        "/..;/..;/admin/keys",
        "/%2e%2e;/%2e%2e;/admin/keys",
        "/%252e%252e/%252e%252e/admin/keys",
        "/v1/.;/messages",
        "/v1/x/..;param/messages",
    ] {
        let addr = addr.clone();
        let answer = tokio::task::spawn_blocking(move || post(&addr, path, "")).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 400"), "{path}: {answer}");
        assert!(answer.contains("may read as `..`"), "{path}: {answer}");
    }
    assert!(sidecar.upstream.requests().is_empty(), "nothing was forwarded");
    let answer = tokio::task::spawn_blocking(move || post(&addr, "/v1/x/../messages", "")).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(sidecar.upstream.requests()[0].path, "/gw/team-a/v1/messages");
}

#[tokio::test]
async fn h2_cross_site_browser_requests_are_refused_on_every_route() {
    let sidecar = Sidecar::start(ok_reply()).await;
    let addr = address(&sidecar);
    let cases = [
        ("/v1/messages", "Origin: https://evil.example\r\n", "403"),
        ("/v1/messages", "Origin: null\r\n", "403"),
        ("/v1/messages", "Sec-Fetch-Site: cross-site\r\n", "403"),
        ("/events", "Origin: https://evil.example\r\n", "403"),
        ("/v1/messages", "Origin: http://127.0.0.1:8787\r\nSec-Fetch-Site: same-origin\r\n", "200"),
        ("/v1/messages", "", "200"),
    ];
    for (path, extra, status) in cases {
        let addr = addr.clone();
        let answer = tokio::task::spawn_blocking(move || post(&addr, path, extra)).await.unwrap();
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{path} {extra:?}: {answer}");
        if status == "403" {
            assert!(answer.contains("may not use the sidecar"), "{answer}");
        }
    }
    assert_eq!(sidecar.upstream.requests().len(), 2, "only the requests without a foreign origin were forwarded");
}

#[tokio::test]
async fn d2_a_body_still_arriving_after_body_read_timeout_gets_a_408() {
    let sidecar = Sidecar::start_with(ok_reply(), |config| config.body_read_timeout = Duration::from_secs(1)).await;
    let addr = address(&sidecar);
    // A few bytes of the body, then nothing: the client keeps the connection open.
    let cases: [(&str, &[u8]); 2] = [
        ("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n", b"{\"model\""),
        ("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"5\r\n{\"mod\r\n"),
    ];
    for (head, body) in cases {
        let addr = addr.clone();
        let answer = tokio::task::spawn_blocking(move || exchange(&addr, head, body)).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{head:?}: {answer}");
        assert!(answer.contains("body_read_timeout_seconds"), "{answer}");
    }
    let answer = tokio::task::spawn_blocking(move || post(&addr, "/v1/messages", "")).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "a prompt body still passes: {answer}");
}

#[tokio::test]
async fn d2_connections_above_max_connections_are_closed_and_the_sidecar_goes_on() {
    let sidecar = Sidecar::start_with(ok_reply(), |config| config.max_connections = 2).await;
    let addr = address(&sidecar);
    let outcome = tokio::task::spawn_blocking(move || {
        // Two kept-alive connections, each known to be open: they have been answered.
        let held: Vec<TcpStream> = (0..2)
            .map(|_| {
                let mut tcp = TcpStream::connect(&addr).unwrap();
                tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
                tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
                let mut answer = [0u8; 12];
                tcp.read_exact(&mut answer).unwrap();
                assert_eq!(&answer, b"HTTP/1.1 200");
                tcp
            })
            .collect();
        let refused = exchange(&addr, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", b"");
        drop(held);
        // The held connections' ends reach the sidecar in their own time; then it answers again.
        let mut again = String::new();
        for _ in 0..200 {
            again = exchange(&addr, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", b"");
            if !again.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        (refused, again)
    })
    .await
    .unwrap();
    assert_eq!(outcome.0, "", "the third connection was closed unanswered");
    assert!(outcome.1.starts_with("HTTP/1.1 200"), "{}", outcome.1);
}

/// Sends a body's head declaring `length` bytes and its first `part`, and leaves it open.
fn open_body(addr: &str, length: usize, part: &[u8]) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).unwrap();
    tcp.write_all(part).unwrap();
    tcp
}

fn declared_exchange(addr: &str, body: &[u8]) -> String {
    let head = format!(
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    exchange(addr, &head, body)
}

/// The seed request with a second tool whose description is `padding` bytes long: its `tools`
/// text is what a streamed body is read for.
fn padded_seed_request(padding: usize) -> Vec<u8> {
    let mut tools = toolmend::demo::seed_tools();
    tools.as_array_mut().unwrap().push(json!({"name": "pad", "description": "p".repeat(padding),
        "input_schema": {"type": "object"}}));
    serde_json::to_vec(&json!({"model": "m", "max_tokens": 100, "stream": true, "tools": tools,
        "messages": [{"role": "user", "content": "hi"}]}))
    .unwrap()
}

/// A streamed body's answer: its status and the stream as the client reads it.
async fn post_body(url: &str, body: Vec<u8>) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

fn filler(size: usize) -> Vec<u8> {
    format!("{{\"model\": \"m\", \"messages\": [\"{}\"]}}", "x".repeat(size)).into_bytes()
}

/// The request bytes the sidecar holds now, from `/metrics`.
fn held_bytes(addr: &str) -> u64 {
    let answer = exchange(addr, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", b"");
    let line = answer.lines().find(|line| line.starts_with("toolmend_request_memory_held_bytes ")).expect("the gauge");
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Waits until the bytes held satisfy `done` (another connection's bytes reach the sidecar in
/// their own time); panics after 10 s, naming what is held.
fn wait_for_held(addr: &str, done: impl Fn(u64) -> bool) {
    for _ in 0..400 {
        if done(held_bytes(addr)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the bytes held never reached the state waited for: {}", held_bytes(addr));
}

#[tokio::test]
async fn d2_bodies_read_whole_are_bounded_over_all_requests() {
    use toolmend::demo::SEED_STREAM;
    // Strict injection rewrites requests, so their bodies are read whole.
    let sidecar = Sidecar::start_with(
        |_| Reply::sse(SEED_STREAM, 64),
        |config| {
            config.max_request_bytes = 150 << 10;
            config.request_memory_bytes = 200 << 10;
            config.strict.tools = vec!["search".into()];
        },
    )
    .await;
    let addr = address(&sidecar);
    let (refused, again) = tokio::task::spawn_blocking(move || {
        // 120 KiB of a body that has not all arrived; once they are held, a 100 KiB one cannot be.
        let sent = [&b"{\"model\": \"m\", \"messages\": [\""[..], &[b'x'; 120 << 10]].concat();
        let hog = open_body(&addr, 130 << 10, &sent);
        wait_for_held(&addr, |held| held >= 120 << 10);
        let refused = declared_exchange(&addr, &filler(100 << 10));
        drop(hog);
        wait_for_held(&addr, |held| held == 0);
        let again = declared_exchange(&addr, &filler(100 << 10));
        (refused, again)
    })
    .await
    .unwrap();
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("request_memory_bytes") && refused.to_lowercase().contains("retry-after: 1"), "{refused}");
    assert!(again.starts_with("HTTP/1.1 200"), "what the dropped body held was given back: {again}");
}

#[tokio::test]
async fn d2_a_streamed_body_whose_tools_cannot_be_held_passes_through_unread() {
    use toolmend::demo::SEED_STREAM;
    let sidecar = Sidecar::start_with(
        |_| Reply::sse(SEED_STREAM, 64),
        |config| {
            config.max_request_bytes = 150 << 10;
            config.request_memory_bytes = 200 << 10;
        },
    )
    .await;
    let addr = address(&sidecar);
    // A body stopped inside its `tools` text after 120 KiB of it: those bytes are held.
    let mut open = format!("{{\"model\": \"m\", \"tools\": [\"{}", "t".repeat(120 << 10)).into_bytes();
    let hog_addr = addr.clone();
    let hog =
        tokio::task::spawn_blocking(move || open_body(&hog_addr, 140 << 10, &std::mem::take(&mut open))).await.unwrap();
    let probe_addr = addr.clone();
    tokio::task::spawn_blocking(move || wait_for_held(&probe_addr, |held| held >= 120 << 10)).await.unwrap();
    let request = padded_seed_request(100 << 10);
    let unread = post_body(&sidecar.url, request.clone()).await;
    assert_eq!(unread, (200, SEED_STREAM.to_string()), "its tools unread, the stream passed through unrepaired");
    drop(hog);
    let probe_addr = addr.clone();
    tokio::task::spawn_blocking(move || wait_for_held(&probe_addr, |held| held == 0)).await.unwrap();
    let read = post_body(&sidecar.url, request.clone()).await;
    assert_eq!(read.0, 200);
    assert_ne!(read.1, SEED_STREAM, "repaired once the hog's bytes were given back");
}

/// A body sent chunked (no declared length), in 16 KiB chunks: the status and the stream.
async fn post_chunked(url: &str, body: Vec<u8>) -> (u16, String) {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = body.chunks(16 << 10).map(|c| Ok(c.to_vec())).collect();
    let response = reqwest::Client::new()
        .post(format!("{url}/v1/messages"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn a_chunked_body_streams_upstream_is_read_for_its_tools_and_bounded_by_max_request_bytes() {
    use toolmend::demo::SEED_STREAM;
    let sidecar =
        Sidecar::start_with(|_| Reply::sse(SEED_STREAM, 64), |config| config.max_request_bytes = 64 << 10).await;
    let request = padded_seed_request(20 << 10);
    let (status, stream) = post_chunked(&sidecar.url, request.clone()).await;
    assert_eq!(status, 200);
    assert_ne!(stream, SEED_STREAM, "the call was repaired: its tools were read from the chunked body");
    let received = sidecar.upstream.requests();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].body, request, "the upstream got the body as the client sent it");
    assert_eq!(received[0].header("content-length"), None, "chunked as the client sent it");
    let (status, answer) = post_chunked(&sidecar.url, filler(100 << 10)).await;
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains("request_too_large"), "{answer}");
    // The upstream may have seen its head; never its whole body (the fake records a broken one as empty).
    let over = filler(100 << 10);
    assert!(
        sidecar.upstream.requests().iter().all(|r| r.body.len() < over.len()),
        "it never reached the upstream whole"
    );
}

#[tokio::test]
async fn a_transfer_coding_other_than_chunked_is_refused_not_sent_on_as_a_plain_body() {
    let sidecar = Sidecar::start(ok_reply()).await;
    let addr = address(&sidecar);
    let answers = tokio::task::spawn_blocking(move || {
        ["gzip, chunked", "deflate,chunked"].map(|coding| {
            let head = format!(
                "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: {coding}\r\nConnection: close\r\n\r\n"
            );
            exchange(&addr, &head, b"5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n")
        })
    })
    .await
    .unwrap();
    for answer in answers {
        assert!(answer.starts_with("HTTP/1.1 501"), "{answer}");
        assert!(answer.contains("transfer coding"), "{answer}");
    }
    assert!(sidecar.upstream.requests().is_empty(), "nothing reached the upstream");
}
