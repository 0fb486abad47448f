//! Repair engine benchmarks: the valid-input fast path against plain `serde_json::from_str` on
//! the same inputs, and repair throughput over the tool-call corpus.
//! Run: `cargo bench --bench repair`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::Value;
use std::hint::black_box;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

fn corpus() -> Vec<(ToolSchema, String)> {
    include_str!("../fixtures/corpus/toolcalls.jsonl")
        .lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            (ToolSchema::compile(&case["schema"]).unwrap(), case["raw"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Valid inputs: the corpus's repaired answers, serialized, plus one larger realistic input.
fn valid_inputs() -> Vec<String> {
    let mut inputs: Vec<String> = include_str!("../fixtures/corpus/toolcalls.jsonl")
        .lines()
        .filter_map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            case["accept"][0].get("input").map(|i| i.to_string())
        })
        .collect();
    let body = "lorem ipsum dolor sit amet ".repeat(200);
    inputs.push(serde_json::json!({"title": "long", "body": body, "tags": ["a", "b", "c"]}).to_string());
    inputs
}

fn valid_fast_path(c: &mut Criterion) {
    let inputs = valid_inputs();
    let bytes: usize = inputs.iter().map(String::len).sum();
    let schema = &corpus()[0].0;
    let mut group = c.benchmark_group("valid");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("serde_json::from_str", |b| {
        b.iter(|| {
            for input in &inputs {
                black_box(serde_json::from_str::<Value>(black_box(input)).unwrap());
            }
        })
    });
    group.bench_function("toolmend::repair", |b| {
        b.iter(|| {
            for input in &inputs {
                let outcome = repair(black_box(input), Some(schema), &RepairOptions::default());
                assert_eq!(outcome.status, Status::Valid);
                black_box(outcome);
            }
        })
    });
    group.finish();
}

fn corpus_throughput(c: &mut Criterion) {
    let cases = corpus();
    let bytes: usize = cases.iter().map(|(_, raw)| raw.len()).sum();
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("repair all 42", |b| {
        b.iter(|| {
            for (schema, raw) in &cases {
                black_box(repair(black_box(raw), Some(schema), &RepairOptions::default()));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, valid_fast_path, corpus_throughput);
criterion_main!(benches);
