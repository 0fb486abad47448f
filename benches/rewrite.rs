//! The request rewrite on a Claude Code-sized request (the 22 tools the real CLI 2.1.332 sent,
//! 62 KB of schemas): strict and examples injection on the MCP tool, against parsing the whole
//! body once into a `serde_json::Value`.
//! Run: `cargo bench --bench rewrite`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::hint::black_box;
use toolmend::proxy::examples::{self, ExampleSet, ExamplesConfig};
use toolmend::proxy::strict::{self, StrictConfig};
use toolmend::proxy::tools_rewrite::RequestTools;
use toolmend::schema::SchemaCache;

fn request_body() -> Vec<u8> {
    let shape = include_str!("../fixtures/transcripts/real-cli-2.1.332.jsonl")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["type"] == "api-request-shape")
        .unwrap();
    let history = "Search the Swedish rules on token machine payout percentage. ".repeat(300);
    json!({"model": "claude-opus-4-5", "max_tokens": 32000, "stream": true, "tools": shape["shape"]["tools"],
           "messages": [{"role": "user", "content": history}]})
    .to_string()
    .into_bytes()
}

fn rewrite(c: &mut Criterion) {
    let body = request_body();
    let strict_config = StrictConfig { tools: vec!["mcp__search__*".into()], ..StrictConfig::default() };
    let examples_config = ExamplesConfig {
        tools: vec![("mcp__search__search".into(), vec![json!({"jurisdiction": "se", "terms": ["payout"]})])],
        ..ExamplesConfig::default()
    };
    let set = ExampleSet::load(&examples_config).unwrap();
    let schemas = SchemaCache::new(64);
    let adapted = BTreeSet::new();
    let mut group = c.benchmark_group("rewrite");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("serde_json::from_slice::<Value> (whole body)", |b| {
        b.iter(|| black_box(serde_json::from_slice::<Value>(black_box(&body)).unwrap()))
    });
    group.bench_function("strict + examples on the MCP tool, spliced", |b| {
        b.iter(|| {
            let mut tools = RequestTools::parse(black_box(&body)).unwrap();
            let strict = strict::plan(&tools, &strict_config, &adapted).unwrap();
            tools.apply(&strict.rewrite);
            let examples = examples::plan(&tools, &set, &schemas).unwrap();
            tools.apply(&examples.rewrite);
            black_box(tools.body())
        })
    });
    group.finish();
}

criterion_group!(benches, rewrite);
criterion_main!(benches);
