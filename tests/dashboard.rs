//! deploy/grafana/toolmend.json queries only metrics a running sidecar serves on /metrics, with
//! labels those metrics carry. The sidecar sees a repaired call, strict injection and a hook
//! run first, so every family has samples.

mod common;

use common::{responder, Sidecar, TOOL};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use toolmend::proxy::hooks::HookConfig;
use toolmend::proxy::strict::StrictConfig;

fn dashboard() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/grafana/toolmend.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("the dashboard is JSON")
}

/// Every PromQL text in the dashboard: panel targets and template variable queries.
fn queries(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("expr" | "definition" | "query", Value::String(text)) if text.contains("toolmend_") => {
                        out.push(text.clone())
                    }
                    _ => queries(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| queries(item, out)),
        _ => {}
    }
}

fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect()
}

/// Label names a query groups by (`by (a, b)`) or selects on (`{a="x", b=~"y"}`).
fn labels_used(query: &str) -> BTreeSet<String> {
    let mut labels = BTreeSet::new();
    for part in query.split("by (").skip(1) {
        let inside = part.split(')').next().unwrap_or_default();
        labels.extend(identifiers(inside).into_iter().map(String::from));
    }
    for part in query.split('{').skip(1) {
        let inside = part.split('}').next().unwrap_or_default();
        for matcher in inside.split(',') {
            if let Some((key, _)) = matcher.split_once(['=', '!']) {
                labels.extend(identifiers(key).into_iter().map(String::from));
            }
        }
    }
    labels
}

/// Sample names the text format declares (`# TYPE name counter` serves `name_total`), and the
/// label names seen on each family's samples.
fn served(metrics: &str) -> (BTreeSet<String>, BTreeMap<String, BTreeSet<String>>) {
    let mut names = BTreeSet::new();
    for line in metrics.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (family, kind) = rest.split_once(' ').unwrap();
            let suffixes: &[&str] = match kind {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            names.extend(suffixes.iter().map(|suffix| format!("{family}{suffix}")));
        }
    }
    let mut labels: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in metrics.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let name = line.split(['{', ' ']).next().unwrap();
        let keys = line.split_once('{').map(|(_, rest)| rest.split('}').next().unwrap()).unwrap_or_default();
        let entry = labels.entry(name.to_string()).or_default();
        entry.extend(keys.split(',').filter_map(|pair| pair.split_once('=')).map(|(k, _)| k.to_string()));
    }
    (names, labels)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_and_label_the_dashboard_queries_is_served() {
    let strict = StrictConfig { tools: vec![TOOL.into()], ..StrictConfig::default() };
    let hook = HookConfig { on: vec!["repaired".into()], command: "true".into(), timeout_seconds: 10 };
    let sidecar = Sidecar::start_with(responder(r#"{"query": "x", "terms": a, b}"#), |config| {
        config.strict = strict;
        config.hooks = vec![hook];
    })
    .await;
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"},
        "terms": {"type": "array", "items": {"type": "string"}}}, "required": ["query"]});
    let body = json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [],
        "tools": [{"name": TOOL, "input_schema": schema}]});
    let reply = reqwest::Client::new().post(format!("{}/v1/messages", sidecar.url)).json(&body).send().await.unwrap();
    assert!(reply.text().await.unwrap().contains(r#"[\"a\",\"b\"]"#), "the call was repaired");
    // Prometheus leaves out a labelled family until it has a sample: wait for the hook's.
    let mut metrics = sidecar.get("/metrics").await;
    for _ in 0..200 {
        if metrics.contains("toolmend_hook_runs_total") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        metrics = sidecar.get("/metrics").await;
    }
    let (names, labels) = served(&metrics);

    let mut texts = Vec::new();
    queries(&dashboard(), &mut texts);
    assert!(texts.len() >= 20, "{texts:?}");
    let mut queried = BTreeSet::new();
    for text in &texts {
        let metrics: Vec<&str> = identifiers(text).into_iter().filter(|w| w.starts_with("toolmend_")).collect();
        for metric in &metrics {
            assert!(names.contains(*metric), "{metric} (in `{text}`) is not on /metrics: {names:?}");
            queried.insert(metric.to_string());
        }
        // Labels must be on some metric of the query that has samples now.
        let seen: BTreeSet<&String> = metrics.iter().filter_map(|m| labels.get(*m)).flatten().collect();
        if seen.is_empty() {
            continue;
        }
        for label in labels_used(text).iter().filter(|l| !["job", "instance", "le"].contains(&l.as_str())) {
            assert!(seen.contains(label), "label {label} (in `{text}`) is not on its metrics: {seen:?}");
        }
    }
    for wanted in [
        "toolmend_tool_calls_total",
        "toolmend_repair_edits_total",
        "toolmend_overhead_seconds_bucket",
        "toolmend_hold_seconds_bucket",
        "toolmend_upstream_requests_total",
    ] {
        assert!(queried.contains(wanted), "the dashboard shows {wanted}");
    }
}

#[test]
fn the_label_scanner_reads_groupings_and_selectors() {
    let labels = labels_used(r#"sum by (tool, outcome) (rate(x{job=~"$job", outcome!="valid"}[5m]))"#);
    assert_eq!(labels.into_iter().collect::<Vec<_>>(), ["job", "outcome", "tool"]);
}
