//! An upstream that answers before it read the request body (attack round 10, findings 5 and
//! 6): its own answer reaches the client (not a 502 made of the body's write error), at once
//! (not after the whole body), and the request memory the body holds comes back when the
//! exchange is over, though the upstream keeps the connection without reading.

mod common;

use common::Sidecar;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;
use toolmend::demo::fake_upstream::Reply;

/// What the raw upstream does once a request's head is in.
#[derive(Clone, Copy)]
enum Early {
    /// Answers, then closes with the body unread (the kernel resets the connection).
    AnswerAndClose,
    /// Answers, then keeps the connection without reading until told to stop; then reads what
    /// is left to its end and reports how many body bytes came after the head.
    AnswerAndHold,
}

/// A loopback upstream answering `answer` to every request as soon as its head is in. With
/// `AnswerAndHold`, each connection waits on `release` (dropped: stop) and then sends on the
/// returned receiver the body bytes it got. Its thread ends when `release` is dropped, or after
/// 60 s if a test hangs.
fn raw_upstream(
    answer: &'static [u8],
    early: Early,
) -> (String, mpsc::Sender<()>, mpsc::Receiver<usize>, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (release, released) = mpsc::channel::<()>();
    let (report, reports) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        listener.set_nonblocking(false).unwrap();
        let mut released = Some(released);
        for tcp in listener.incoming() {
            let Ok(mut tcp) = tcp else { return };
            tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            let mut got = Vec::new();
            let mut buf = [0; 8192];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match tcp.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            if got.starts_with(b"STOP") {
                return;
            }
            let _ = tcp.write_all(answer);
            match early {
                Early::AnswerAndClose => drop(tcp),
                Early::AnswerAndHold => {
                    let _ = released.take().map(|r| r.recv_timeout(Duration::from_secs(60)));
                    let mut rest = Vec::new();
                    let _ = tcp.read_to_end(&mut rest);
                    let head_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    let _ = report.send(got.len() - head_end + rest.len());
                    return;
                }
            }
        }
    });
    (url, release, reports, thread)
}

/// Ends a raw upstream's accept loop.
fn stop_upstream(url: &str) {
    if let Ok(mut tcp) = TcpStream::connect(url.trim_start_matches("http://")) {
        let _ = tcp.write_all(b"STOP\r\n\r\n");
    }
}

const REFUSAL: &[u8] = b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: 59\r\n\
Connection: close\r\n\r\n{\"type\":\"error\",\"error\":{\"type\":\"request_too_large\",\"x\":1}}";

const SSE_BODY: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

async fn sidecar_for(upstream: &str) -> Sidecar {
    let upstream = upstream.to_string();
    Sidecar::start_with(|_| Reply::json(500, &serde_json::json!({})), move |config| config.upstream = upstream).await
}

/// Sends `head` and `body` on a new connection (the body from another thread, as a client that
/// writes while it waits for the answer) and reads the answer until its body holds `until` (or
/// the server closes the connection). Returns the answer (its body unchunked) and the open
/// connection.
fn send_and_read(addr: &str, head: String, body: Vec<u8>, until: &str) -> (String, TcpStream) {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut writer = tcp.try_clone().unwrap();
    std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(&body));
    });
    let mut answer = Vec::new();
    let mut buf = [0; 8192];
    while !unchunked(&answer).split_once("\r\n\r\n").is_some_and(|(_, body)| body.contains(until)) {
        match tcp.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
    }
    (unchunked(&answer), tcp)
}

/// An answer with its body's chunked framing taken away (as far as it arrived).
fn unchunked(answer: &[u8]) -> String {
    let text = String::from_utf8_lossy(answer);
    let Some((head, mut rest)) = text.split_once("\r\n\r\n") else { return text.into_owned() };
    if !head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        return text.into_owned();
    }
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    format!("{head}\r\n\r\n{body}")
}

fn big_body(tools_padding: usize, history: usize) -> Vec<u8> {
    format!(
        r#"{{"model":"m","max_tokens":1,"stream":true,"tools":[{{"name":"T","description":"{}","input_schema":{{"type":"object"}}}}],"messages":[{{"role":"user","content":"{}"}}]}}"#,
        "d".repeat(tools_padding),
        "m".repeat(history)
    )
    .into_bytes()
}

fn chunked(body: &[u8]) -> Vec<u8> {
    let mut framed = Vec::new();
    for piece in body.chunks(64 << 10) {
        framed.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        framed.extend_from_slice(piece);
        framed.extend_from_slice(b"\r\n");
    }
    framed.extend_from_slice(b"0\r\n\r\n");
    framed
}

fn head(framing: &str) -> String {
    format!("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{framing}\r\n")
}

/// The request bytes the sidecar holds now, from `/metrics`.
fn held_bytes(addr: &str) -> u64 {
    let (answer, _) = send_and_read(
        addr,
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".into(),
        Vec::new(),
        "\u{0}",
    );
    let line = answer.lines().find(|line| line.starts_with("toolmend_request_memory_held_bytes ")).expect("the gauge");
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Waits until the bytes held satisfy `done`; panics after 10 s, naming what is held.
fn wait_for_held(addr: &str, done: impl Fn(u64) -> bool) {
    for _ in 0..400 {
        if done(held_bytes(addr)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the bytes held never reached the state waited for: {}", held_bytes(addr));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_refusing_a_body_early_and_closing_has_its_own_413_reach_the_client() {
    let (upstream, _release, _reports, thread) = raw_upstream(REFUSAL, Early::AnswerAndClose);
    let sidecar = sidecar_for(&upstream).await;
    let addr = sidecar.url.trim_start_matches("http://").to_string();
    let answers = tokio::task::spawn_blocking(move || {
        let body = big_body(0, 4 << 20);
        let mut answers = Vec::new();
        for _ in 0..8 {
            let framing = format!("Content-Length: {}\r\n", body.len());
            answers.push(send_and_read(&addr, head(&framing), body.clone(), "\"x\":1}}").0);
            let framing = "Transfer-Encoding: chunked\r\n";
            answers.push(send_and_read(&addr, head(framing), chunked(&body), "\"x\":1}}").0);
        }
        answers
    })
    .await
    .unwrap();
    stop_upstream(&upstream);
    thread.join().unwrap();
    for answer in answers {
        // Before: often a 502 "the upstream could not be reached", which SDKs retry.
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
        assert!(answer.ends_with(r#"{"type":"error","error":{"type":"request_too_large","x":1}}"#), "{answer}");
    }
}

/// The upstream answers `answer` before reading a 10 MiB body whose 2 MiB `tools` come first,
/// and never reads it: the client gets `expected`, and every held byte comes back once it has.
async fn early_answer_without_reading(answer: &'static [u8], expected: &'static str) {
    let (upstream, release, reports, thread) = raw_upstream(answer, Early::AnswerAndHold);
    let sidecar = sidecar_for(&upstream).await;
    let addr = sidecar.url.trim_start_matches("http://").to_string();
    let body = big_body(2 << 20, 8 << 20);
    let declared = body.len();
    let answer = tokio::task::spawn_blocking(move || {
        let framing = format!("Content-Length: {declared}\r\n");
        let (answer, client) = send_and_read(&addr, head(&framing), body, expected);
        drop(client);
        // The exchange is over: what the body held is given back though the upstream holds on.
        wait_for_held(&addr, |held| held == 0);
        answer
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with(expected), "the upstream's body, as it sent it: {answer}");
    drop(release);
    let forwarded = reports.recv_timeout(Duration::from_secs(60)).unwrap();
    assert!(forwarded < declared, "the body was cut, never sent on as complete: {forwarded} of {declared}");
    stop_upstream(&upstream);
    thread.join().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_early_json_answer_from_an_upstream_that_never_reads_gives_the_held_bytes_back() {
    const ANSWER: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}";
    early_answer_without_reading(ANSWER, "{\"ok\":true}").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_early_stream_from_an_upstream_that_never_reads_reaches_the_client_at_once_unrepaired() {
    // Before: the sidecar waited for the whole body (for its tools) and the client got nothing.
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{SSE_BODY}",
        SSE_BODY.len()
    );
    early_answer_without_reading(Box::leak(answer.into_bytes().into_boxed_slice()), SSE_BODY).await;
}
