//! The latency toolmend adds to streamed responses, and its memory with many open streams.
//!
//! Run: `cargo bench --bench latency`. One run measures the same fake upstream (on loopback)
//! directly and through a `toolmend serve` child process, at 1, 64 and 512 concurrent streams,
//! then holds 1000 streams open through toolmend and reads its resident memory.

use futures_util::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolmend::demo::fake_upstream::{FakeUpstream, Reply};

mod support;
use support::Sidecar;

const VALID_STREAM: &str = include_str!("../fixtures/sse/valid-tool.sse");

fn body() -> String {
    serde_json::json!({"model": "m", "max_tokens": 100, "stream": true, "tools": toolmend::demo::seed_tools(),
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string()
}

/// Time from sending the request to the last byte of the stream, for `total` requests run
/// `concurrency` at a time.
async fn measure(client: &reqwest::Client, base: &str, concurrency: usize, total: usize) -> Vec<Duration> {
    let body = Arc::new(body());
    let url = Arc::new(format!("{base}/v1/messages"));
    let results = futures_util::stream::iter(0..total)
        .map(|_| {
            let (client, body, url) = (client.clone(), body.clone(), url.clone());
            async move {
                let started = Instant::now();
                let response = client.post(url.as_str()).body(body.to_string()).send().await.unwrap();
                let mut stream = response.bytes_stream();
                while let Some(chunk) = stream.next().await {
                    chunk.unwrap();
                }
                started.elapsed()
            }
        })
        .buffer_unordered(concurrency)
        .collect::<Vec<_>>()
        .await;
    let mut results = results;
    results.sort();
    results
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    // `cargo test --benches` runs this binary too; only `cargo bench` (which passes --bench) measures.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    toolmend::init_tls();
    let upstream = FakeUpstream::start(Arc::new(|_| Reply::sse(VALID_STREAM, 256))).await.unwrap();
    let sidecar = Sidecar::start(&upstream.url());
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).build().unwrap();
    // Warm both paths (connections, schema cache).
    measure(&client, &upstream.url(), 8, 64).await;
    measure(&client, &sidecar.url, 8, 64).await;

    println!("| concurrent streams | requests | direct p50 / p99 (ms) | through toolmend p50 / p99 (ms) | added p50 / p99 (ms) |");
    println!("|---|---|---|---|---|");
    for (concurrency, total) in [(1, 400), (64, 4000), (512, 8192)] {
        let direct = measure(&client, &upstream.url(), concurrency, total).await;
        let proxied = measure(&client, &sidecar.url, concurrency, total).await;
        let (d50, d99, p50, p99) = (
            percentile(&direct, 0.5),
            percentile(&direct, 0.99),
            percentile(&proxied, 0.5),
            percentile(&proxied, 0.99),
        );
        println!(
            "| {concurrency} | {total} | {} / {} | {} / {} | {} / {} |",
            ms(d50),
            ms(d99),
            ms(p50),
            ms(p99),
            ms(p50.saturating_sub(d50)),
            ms(p99.saturating_sub(d99))
        );
    }

    // 1000 open streams: the fake sends the stream slowly so every one stays open.
    let slow = FakeUpstream::start(Arc::new(|_| Reply::sse(VALID_STREAM, 64).with_delay(Duration::from_millis(300))))
        .await
        .unwrap();
    let held = Sidecar::start(&slow.url());
    let idle_rss = held.rss_kib();
    let client = reqwest::Client::builder().pool_max_idle_per_host(2048).build().unwrap();
    let url = format!("{}/v1/messages", held.url);
    let mut open = Vec::new();
    for _ in 0..1000 {
        let response = client.post(&url).body(body()).send();
        open.push(tokio::spawn(async move {
            let response = response.await.unwrap();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                chunk.unwrap();
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let open_rss = held.rss_kib();
    for task in open {
        task.await.unwrap();
    }
    println!();
    println!(
        "toolmend resident memory: {} MiB idle, {} MiB with 1000 open streams ({:.1} KiB per stream)",
        idle_rss / 1024,
        open_rss / 1024,
        (open_rss.saturating_sub(idle_rss)) as f64 / 1000.0
    );
}
