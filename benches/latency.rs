//! The latency toolmend adds to streamed responses, as a ratio to plain proxies measured in the
//! same run, and its memory after load and with many open streams.
//!
//! Run: `cargo bench --bench latency` (`TOOLMEND_BIN=path` measures another build of the
//! binary). One run streams the same SSE response from a loopback upstream directly, through a
//! `toolmend serve` child process, through the anchor (a minimal hyper pass-through proxy, no
//! parsing) and through nginx (one worker, `proxy_buffering off`) when it is installed, for a
//! tiny request and for a realistic Claude Code request (~450 KB, `tools` after `messages`), at
//! 1, 64 and 512 concurrent streams, the targets taken in turn in rounds. Then it reads toolmend's resident memory idle after that
//! load, and with 1000 small streams held open.

use bytes::Bytes;
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;
use support::Sidecar;
#[path = "support/loopback.rs"]
mod loopback;
#[path = "support/realistic.rs"]
mod realistic;

const VALID_STREAM: &str = include_str!("../fixtures/sse/valid-tool.sse");

fn tiny_body() -> String {
    serde_json::json!({"model": "m", "max_tokens": 100, "stream": true, "tools": toolmend::demo::seed_tools(),
        "messages": [{"role": "user", "content": "hi"}]})
    .to_string()
}

/// Times from sending each request to the last byte of its stream (sorted), for `total`
/// requests run `concurrency` at a time, and the time the whole run took.
async fn measure(client: &reqwest::Client, base: &str, body: &Bytes, concurrency: usize, total: usize) -> Run {
    let url = Arc::new(format!("{base}/v1/messages?beta=true"));
    let started = Instant::now();
    let mut times = futures_util::stream::iter(0..total)
        .map(|_| {
            let (client, body, url) = (client.clone(), body.clone(), url.clone());
            async move {
                let started = Instant::now();
                let response = client.post(url.as_str()).body(body).send().await.unwrap();
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
    times.sort();
    Run { times, elapsed: started.elapsed() }
}

/// `total` requests to each target, in rounds that take the targets in turn (each round
/// starting one target further on), so that a slow minute on this shared machine falls on every
/// target alike rather than on whichever was measured then. A round holds at least four waves
/// of `concurrency` requests.
async fn interleaved(
    client: &reqwest::Client,
    targets: &[&str],
    body: &Bytes,
    concurrency: usize,
    total: usize,
) -> Vec<Run> {
    let rounds = (total / (4 * concurrency)).clamp(1, 10);
    let mut runs: Vec<Run> = targets.iter().map(|_| Run::default()).collect();
    for round in 0..rounds {
        for turn in 0..targets.len() {
            let target = (round + turn) % targets.len();
            let run = measure(client, targets[target], body, concurrency, total / rounds).await;
            runs[target].absorb(run);
        }
    }
    runs
}

#[derive(Default)]
struct Run {
    times: Vec<Duration>,
    elapsed: Duration,
}

impl Run {
    fn absorb(&mut self, other: Run) {
        self.times.extend(other.times);
        self.times.sort();
        self.elapsed += other.elapsed;
    }

    fn percentile(&self, p: f64) -> Duration {
        self.times[((self.times.len() as f64 - 1.0) * p).round() as usize]
    }

    /// Time added over `direct` at p50 and p99.
    fn added(&self, direct: &Run) -> (Duration, Duration) {
        (
            self.percentile(0.5).saturating_sub(direct.percentile(0.5)),
            self.percentile(0.99).saturating_sub(direct.percentile(0.99)),
        )
    }

    fn per_second(&self) -> f64 {
        self.times.len() as f64 / self.elapsed.as_secs_f64()
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> String {
    if b.is_zero() {
        return "-".into();
    }
    format!("{:.2}x", a.as_secs_f64() / b.as_secs_f64())
}

#[tokio::main]
async fn main() {
    loopback::serve_if_anchor_child();
    // `cargo test --benches` runs this binary too; only `cargo bench` (which passes --bench) measures.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    toolmend::init_tls();
    let upstream = loopback::upstream(VALID_STREAM.as_bytes(), 256, Duration::ZERO);
    let sidecar = Sidecar::start(&upstream);
    let anchor = loopback::pass_through_proxy(&upstream);
    let nginx = loopback::Nginx::start(&upstream);
    let client = reqwest::Client::builder().pool_max_idle_per_host(2048).build().unwrap();
    let started_rss = sidecar.rss_kib();

    let realistic = realistic::request(450_000);
    // LATENCY_DUMP=DIR writes the two request bodies there (for a profiler's own client) and stops.
    if let Ok(dir) = std::env::var("LATENCY_DUMP") {
        std::fs::write(format!("{dir}/tiny.json"), tiny_body()).unwrap();
        std::fs::write(format!("{dir}/realistic.json"), &realistic).unwrap();
        return;
    }
    println!(
        "realistic request: {} bytes, tools {} bytes (24 tools), tools after messages",
        realistic.len(),
        realistic::tools_bytes()
    );
    let mut proxies: Vec<(&str, String)> = vec![("toolmend", sidecar.url.clone())];
    // Another build of toolmend beside this one, in the same run (before/after a change).
    let baseline = std::env::var("TOOLMEND_BASELINE_BIN").ok().map(|bin| Sidecar::start_binary(&bin, &upstream));
    if let Some(baseline) = &baseline {
        proxies.push(("baseline", baseline.url.clone()));
    }
    proxies.push(("anchor", anchor));
    // The same anchor in a process of its own (as toolmend and nginx are), unless LATENCY_NO_CHILD_ANCHOR.
    let anchor_process =
        std::env::var_os("LATENCY_NO_CHILD_ANCHOR").is_none().then(|| loopback::AnchorProcess::start(&upstream));
    if let Some(anchor_process) = &anchor_process {
        proxies.push(("anchor process", anchor_process.url.clone()));
    }
    // LATENCY_REQWEST_ANCHOR=1 adds the anchor with reqwest as its client (the client's share).
    if std::env::var_os("LATENCY_REQWEST_ANCHOR").is_some() {
        proxies.push(("reqwest anchor", loopback::reqwest_pass_through_proxy(&upstream)));
    }
    if let Some(nginx) = &nginx {
        proxies.push(("nginx", nginx.url.clone()));
    } else {
        println!("nginx is not installed: the hyper anchor only");
    }
    let names: Vec<&str> = proxies.iter().map(|(name, _)| *name).collect();
    let others = &names[1..];
    println!();
    println!(
        "| request | streams | requests | direct p50 / p99 (ms) | added p50 / p99 (ms): {} | {} | req/s: direct / {} |",
        names.join(" | "),
        others.iter().map(|other| format!("toolmend ÷ {other}, p50")).collect::<Vec<_>>().join(" | "),
        names.join(" / ")
    );
    println!("|{}", "---|".repeat(5 + names.len() + others.len()));
    let cases = [
        ("tiny", Bytes::from(tiny_body()), [(1, 1000), (64, 4000), (512, 8192)]),
        ("realistic", Bytes::from(realistic), [(1, 1000), (64, 2560), (512, 2048)]),
    ];
    // LATENCY_REQUEST=realistic and LATENCY_STREAMS=1 measure one part only (and skip memory).
    let only_request = std::env::var("LATENCY_REQUEST").ok();
    let only_streams: Option<usize> = std::env::var("LATENCY_STREAMS").ok().and_then(|s| s.parse().ok());
    // LATENCY_SCALE=10 sends ten times the requests (a longer run, for a profiler).
    let scale: usize = std::env::var("LATENCY_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    for (name, body, levels) in &cases {
        if only_request.as_deref().is_some_and(|only| only != *name) {
            continue;
        }
        measure(&client, &upstream, body, 8, 32).await;
        for (_, url) in &proxies {
            measure(&client, url, body, 8, 32).await;
        }
        let targets: Vec<&str> =
            std::iter::once(upstream.as_str()).chain(proxies.iter().map(|(_, url)| url.as_str())).collect();
        for &(concurrency, total) in levels {
            if only_streams.is_some_and(|only| only != concurrency) {
                continue;
            }
            let total = total * scale;
            let mut runs = interleaved(&client, &targets, body, concurrency, total).await.into_iter();
            let direct = runs.next().expect("the direct run");
            let runs: Vec<Run> = runs.collect();
            let added: Vec<_> = runs.iter().map(|run| run.added(&direct)).collect();
            let cells: Vec<String> = added.iter().map(|(p50, p99)| format!("{} / {}", ms(*p50), ms(*p99))).collect();
            let versus: Vec<String> = added[1..].iter().map(|(p50, _)| ratio(added[0].0, *p50)).collect();
            let rates: Vec<String> =
                std::iter::once(&direct).chain(&runs).map(|run| format!("{:.0}", run.per_second())).collect();
            println!(
                "| {name} | {concurrency} | {total} | {} / {} | {} | {} | {} |",
                ms(direct.percentile(0.5)),
                ms(direct.percentile(0.99)),
                cells.join(" | "),
                versus.join(" | "),
                rates.join(" / ")
            );
        }
    }
    if only_request.is_some() || only_streams.is_some() {
        return;
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let after_load_rss = sidecar.rss_kib();
    // The clients' keep-alive connections hold read buffers sized for the big requests.
    drop(client);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let closed_rss = sidecar.rss_kib();
    println!();
    println!(
        "toolmend resident memory: {} MiB at start; idle 5 s after the load above (last: 2048 realistic requests, 512 at a time): {} MiB with the client's 512 keep-alive connections open, {} MiB 5 s after the client closed them",
        started_rss / 1024,
        after_load_rss / 1024,
        closed_rss / 1024
    );
    drop(sidecar);

    // 1000 open streams: the upstream sends the stream slowly so every one stays open.
    let slow = loopback::upstream(VALID_STREAM.as_bytes(), 64, Duration::from_millis(300));
    let held = Sidecar::start(&slow);
    let idle_rss = held.rss_kib();
    let client = reqwest::Client::builder().pool_max_idle_per_host(2048).build().unwrap();
    let url = format!("{}/v1/messages", held.url);
    let mut open = Vec::new();
    for _ in 0..1000 {
        let response = client.post(&url).body(tiny_body()).send();
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
    println!(
        "toolmend resident memory: {} MiB idle, {} MiB with 1000 open small streams ({:.1} KiB per stream)",
        idle_rss / 1024,
        open_rss / 1024,
        (open_rss.saturating_sub(idle_rss)) as f64 / 1000.0
    );
}
