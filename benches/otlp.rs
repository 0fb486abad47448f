//! What OTLP export costs a stream, and what a collector that is down or stuck costs it.
//!
//! Run: `cargo bench --bench otlp`. One run starts three `toolmend serve` children in front of
//! the same fake upstream (the seed's malformed call, so every request is repaired and makes
//! an event): export off, export to a port nothing listens on, and export to a collector that
//! accepts connections and never answers. Requests go one at a time, the three in turn, and the
//! time to the last byte is compared.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};
use support::Sidecar;
use toolmend::demo::fake_upstream::{FakeUpstream, Reply};
use toolmend::demo::{seed_tools, SEED_STREAM};

const ROUNDS: usize = 300;

/// A sidecar exporting to `endpoint`, or not exporting at all.
fn serve(upstream: &str, endpoint: Option<String>) -> Sidecar {
    let mut env = vec![("TOOLMEND_LOG", "error"), ("OTEL_EXPORTER_OTLP_TIMEOUT", "10000")];
    if let Some(endpoint) = &endpoint {
        env.push(("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint));
    }
    Sidecar::start_with(upstream, &env)
}

async fn one(client: &reqwest::Client, url: &str, body: &str) -> Duration {
    let started = Instant::now();
    let text = client.post(format!("{url}/v1/messages")).body(body.to_string()).send().await.unwrap().text().await;
    assert!(text.unwrap().contains("token machine payout percentage"));
    started.elapsed()
}

async fn dropped(client: &reqwest::Client, url: &str) -> String {
    let text = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    text.lines().find_map(|l| l.strip_prefix("toolmend_otel_dropped_total ")).unwrap_or("?").to_string()
}

fn ms(sorted: &[Duration], p: f64) -> String {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    format!("{:.3}", sorted[at].as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    // `cargo test --benches` runs this binary too; only `cargo bench` (which passes --bench) measures.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    toolmend::init_tls();
    let upstream = FakeUpstream::start(Arc::new(|_| Reply::sse(SEED_STREAM, 64))).await.unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let stuck = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let setups = [
        ("export off", serve(&upstream.url(), None)),
        ("collector down (connection refused)", serve(&upstream.url(), Some(format!("http://127.0.0.1:{closed}")))),
        (
            "collector stuck (never answers)",
            serve(&upstream.url(), Some(format!("http://{}", stuck.local_addr().unwrap()))),
        ),
    ];
    let body = serde_json::json!({"model": "m", "max_tokens": 100, "stream": true, "tools": seed_tools(),
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    let client = reqwest::Client::new();
    for (_, serve) in &setups {
        for _ in 0..20 {
            one(&client, &serve.url, &body).await;
        }
    }
    let mut times = vec![Vec::with_capacity(ROUNDS); setups.len()];
    for _ in 0..ROUNDS {
        for (i, (_, serve)) in setups.iter().enumerate() {
            times[i].push(one(&client, &serve.url, &body).await);
        }
    }
    // Failed exports are counted once the exporter gives up (it retries with backoff).
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!("| OTLP export | requests | p50 / p99 (ms) | p50 vs off | toolmend_otel_dropped_total after 5 s |");
    println!("|---|---|---|---|---|");
    let base = {
        let mut off = times[0].clone();
        off.sort();
        off[off.len() / 2].as_secs_f64()
    };
    for (i, (name, serve)) in setups.iter().enumerate() {
        let mut sorted = times[i].clone();
        sorted.sort();
        let ratio = sorted[sorted.len() / 2].as_secs_f64() / base;
        println!(
            "| {name} | {ROUNDS} | {} / {} | {ratio:.2}x | {} |",
            ms(&sorted, 0.5),
            ms(&sorted, 0.99),
            dropped(&client, &serve.url).await
        );
    }
}
