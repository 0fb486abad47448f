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

/// Valid inputs that fit their schemas: the corpus's repaired answers, serialized, each with its
/// case's schema, plus one larger realistic input.
fn valid_inputs() -> Vec<(ToolSchema, String)> {
    let mut inputs: Vec<(ToolSchema, String)> = include_str!("../fixtures/corpus/toolcalls.jsonl")
        .lines()
        .filter_map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            let input = case["accept"][0].get("input")?.to_string();
            let schema = ToolSchema::compile(&case["schema"]).unwrap();
            schema.first_violation(&serde_json::from_str(&input).unwrap()).is_none().then_some((schema, input))
        })
        .collect();
    let body = "lorem ipsum dolor sit amet ".repeat(200);
    let note = serde_json::json!({"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}});
    inputs.push((
        ToolSchema::compile(&note).unwrap(),
        serde_json::json!({"title": "long", "body": body, "tags": ["a", "b", "c"]}).to_string(),
    ));
    inputs
}

/// The valid path: what the sidecar does at `content_block_stop` with input that parses (the
/// CLI's parse, then the schema check) against plain `serde_json::from_str` on the same bytes.
fn valid_fast_path(c: &mut Criterion) {
    let inputs = valid_inputs();
    let bytes: usize = inputs.iter().map(|(_, input)| input.len()).sum();
    let mut group = c.benchmark_group("valid");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("serde_json::from_str", |b| {
        b.iter(|| {
            for (_, input) in &inputs {
                black_box(serde_json::from_str::<Value>(black_box(input)).unwrap());
            }
        })
    });
    group.bench_function("toolmend::repair (parse + schema check)", |b| {
        b.iter(|| {
            for (schema, input) in &inputs {
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
    group.bench_function("repair all shared corpus calls", |b| {
        b.iter(|| {
            for (schema, raw) in &cases {
                black_box(repair(black_box(raw), Some(schema), &RepairOptions::default()));
            }
        })
    });
    group.finish();
}

/// The families corpus: foreign syntax, damaged keys, restarts, coercions — each walks several
/// readings.
fn families_throughput(c: &mut Criterion) {
    let cases: Vec<(ToolSchema, String)> = include_str!("../fixtures/corpus/toolcalls-families.jsonl")
        .lines()
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            (ToolSchema::compile(&case["schema"]).unwrap(), case["raw"].as_str().unwrap().to_string())
        })
        .collect();
    let options = RepairOptions { stop_reason: Some("tool_use".into()), ..RepairOptions::default() };
    let mut group = c.benchmark_group("families");
    group.bench_function("repair all families calls", |b| {
        b.iter(|| {
            for (schema, raw) in &cases {
                black_box(repair(black_box(raw), Some(schema), &options));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, valid_fast_path, corpus_throughput, families_throughput);
criterion_main!(benches);
