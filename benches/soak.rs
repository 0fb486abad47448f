//! Soak: many concurrent streams through a `toolmend serve` child for minutes, a mix of valid,
//! repairable and refused tool calls; every response checked byte for byte against what it
//! must be, and the sidecar's memory sampled as it runs. Loopback only; it stops by itself.
//!
//! Run: `SOAK_SECONDS=180 SOAK_STREAMS=1000 cargo bench --bench soak`

use futures_util::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolmend::demo::fake_upstream::{FakeUpstream, Reply};
use toolmend::schema::ToolCatalog;
use toolmend::stream::{StreamOptions, StreamRepairer};

mod support;
use support::Sidecar;

const STREAMS: [(&str, &str); 3] = [
    ("valid", include_str!("../fixtures/sse/valid-tool.sse")),
    ("seed", include_str!("../fixtures/sse/seed-malformed.sse")),
    ("refused", include_str!("../fixtures/sse/refused-tool.sse")),
];

/// What the client must receive for each stream: the state machine's output on it.
fn expected(stream: &str) -> Vec<u8> {
    let tools = Arc::new(ToolCatalog::from_value(&toolmend::demo::seed_tools()).unwrap());
    let mut machine = StreamRepairer::new(tools, StreamOptions::default());
    let mut out = machine.feed(stream.as_bytes()).chunks.concat();
    out.extend(machine.finish().chunks.concat());
    out
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    toolmend::init_tls();
    let seconds = env_number("SOAK_SECONDS", 180);
    let streams = env_number("SOAK_STREAMS", 1000) as usize;
    let upstream = FakeUpstream::start(Arc::new(|request| {
        let model = request.json().unwrap_or_default()["model"].as_str().unwrap_or("valid").to_string();
        let body = STREAMS.iter().find(|(name, _)| *name == model).map_or(STREAMS[0].1, |(_, body)| body);
        Reply::sse(body, 64).with_delay(Duration::from_millis(40))
    }))
    .await
    .unwrap();
    let sidecar = Sidecar::start(&upstream.url());
    let expected: Vec<(&str, Vec<u8>)> = STREAMS.iter().map(|(name, body)| (*name, expected(body))).collect();
    let expected = Arc::new(expected);
    let client = reqwest::Client::builder().pool_max_idle_per_host(streams * 2).build().unwrap();
    let url = Arc::new(format!("{}/v1/messages", sidecar.url));
    let (done, mismatched, failed) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut workers = Vec::new();
    for worker in 0..streams {
        let (client, url, expected) = (client.clone(), url.clone(), expected.clone());
        let (done, mismatched, failed) = (done.clone(), mismatched.clone(), failed.clone());
        workers.push(tokio::spawn(async move {
            let mut round = worker;
            while Instant::now() < deadline {
                let (kind, want) = &expected[round % expected.len()];
                round += 1;
                let body = serde_json::json!({"model": kind, "max_tokens": 10, "stream": true,
                    "tools": toolmend::demo::seed_tools(), "messages": []});
                let Ok(response) = client.post(url.as_str()).json(&body).send().await else {
                    failed.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                let mut got = Vec::new();
                let mut stream = response.bytes_stream();
                let mut broken = false;
                while let Some(chunk) = stream.next().await {
                    match chunk {
                        Ok(bytes) => got.extend_from_slice(&bytes),
                        Err(_) => broken = true,
                    }
                }
                if broken {
                    failed.fetch_add(1, Ordering::Relaxed);
                } else if &got != want {
                    mismatched.fetch_add(1, Ordering::Relaxed);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    println!("| elapsed (s) | responses checked | mismatched | failed | toolmend RSS (MiB) |");
    println!("|---|---|---|---|---|");
    let started = Instant::now();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs((seconds / 6).max(5))).await;
        println!(
            "| {} | {} | {} | {} | {:.1} |",
            started.elapsed().as_secs(),
            done.load(Ordering::Relaxed),
            mismatched.load(Ordering::Relaxed),
            failed.load(Ordering::Relaxed),
            sidecar.rss_kib() as f64 / 1024.0
        );
    }
    for worker in workers {
        worker.await.unwrap();
    }
    println!(
        "\n{streams} concurrent streams for {seconds} s: {} responses, {} mismatched, {} failed",
        done.load(Ordering::Relaxed),
        mismatched.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed)
    );
}
