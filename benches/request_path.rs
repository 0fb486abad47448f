//! The request path's own work on the realistic Claude Code request (~450 KB, `tools` after
//! `messages`), per request: finding the `tools` member, the catalog lookup by its text, and
//! joining the body's chunks for the scan; serde_json skipping the same body, for scale.
//!
//! Run: `cargo bench --bench request_path`

use bytes::{Bytes, BytesMut};
use std::hint::black_box;
use std::time::{Duration, Instant};
use toolmend::schema::member_scan::MemberScanner;
use toolmend::schema::{request_tools_text, SchemaCache};

#[path = "support/realistic.rs"]
mod realistic;

/// The mean time of `f` over `runs` calls.
fn mean(runs: u32, mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    for _ in 0..runs {
        f();
    }
    started.elapsed() / runs
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let body = realistic::request(450_000);
    let bytes = body.as_bytes();
    let tools = request_tools_text(bytes).expect("the request has tools");
    let cache = SchemaCache::new(64);
    cache.catalog_for_text(tools.as_bytes()).expect("the tools compile");
    let chunks: Vec<Bytes> = bytes.chunks(64 << 10).map(Bytes::copy_from_slice).collect();
    println!("realistic request: {} bytes, tools {} bytes", bytes.len(), realistic::tools_bytes());
    println!("| round | find `tools` | find `tools` in 64 KB chunks as they stream | catalog lookup | join 64 KB chunks | serde_json skipping the body |");
    println!("|---|---|---|---|---|---|");
    for round in 1..=3 {
        let scan = mean(500, || {
            black_box(request_tools_text(black_box(bytes)));
        });
        let streamed = mean(500, || {
            let mut scanner = MemberScanner::new("tools");
            chunks.iter().for_each(|chunk| scanner.push(chunk));
            black_box(scanner.finish());
        });
        let lookup = mean(500, || {
            black_box(cache.catalog_for_text(black_box(tools.as_bytes())));
        });
        let join = mean(500, || {
            let mut whole = BytesMut::with_capacity(bytes.len());
            for chunk in &chunks {
                whole.extend_from_slice(chunk);
            }
            black_box(whole.freeze());
        });
        let serde = mean(100, || {
            black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(bytes)).ok());
        });
        println!("| {round} | {scan:.1?} | {streamed:.1?} | {lookup:.1?} | {join:.1?} | {serde:.1?} |");
    }
}
