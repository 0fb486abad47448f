//! Prometheus metrics, held in app state so every server (and every test) has its own registry.

use super::otel::Instruments;
use opentelemetry::KeyValue;
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::collections::HashSet;
use std::sync::Mutex;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolLabels {
    pub tool: String,
    pub outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VersionLabels {
    pub version: String,
}

pub struct Metrics {
    registry: Registry,
    pub tool_calls: Family<ToolLabels, Counter>,
    pub repair_edits: Family<KindLabels, Counter>,
    pub strict_tools: Family<ResultLabels, Counter>,
    pub upstream_requests: Family<StatusLabels, Counter>,
    pub hook_runs: Family<ResultLabels, Counter>,
    pub events_dropped: Family<ReasonLabels, Counter>,
    pub request_duration: Histogram,
    pub overhead: Histogram,
    pub hold: Histogram,
    /// Request bytes held now (bodies read whole, `tools` text), bounded by `request_memory_bytes`.
    pub request_memory_held: Gauge,
    /// OTLP log records that never reached the collector.
    pub otel_dropped: Counter,
    tool_names: ToolNames,
    /// The same counts for OTLP, when it is exported.
    otel: Option<Instruments>,
}

fn seconds_buckets() -> impl Iterator<Item = f64> {
    [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0, 120.0].into_iter()
}

impl Metrics {
    /// `tool_label_limit`: distinct tool names kept as labels; the rest count as `other`.
    pub fn new(tool_label_limit: usize) -> Self {
        let mut registry = Registry::default();
        let tool_calls = Family::<ToolLabels, Counter>::default();
        let repair_edits = Family::<KindLabels, Counter>::default();
        let strict_tools = Family::<ResultLabels, Counter>::default();
        let upstream_requests = Family::<StatusLabels, Counter>::default();
        let hook_runs = Family::<ResultLabels, Counter>::default();
        let events_dropped = Family::<ReasonLabels, Counter>::default();
        let request_duration = Histogram::new(seconds_buckets());
        let overhead = Histogram::new(seconds_buckets());
        let hold = Histogram::new(seconds_buckets());
        let otel_dropped = Counter::default();
        let request_memory_held = Gauge::default();
        let build_info = Family::<VersionLabels, Gauge>::default();
        build_info.get_or_create(&VersionLabels { version: env!("CARGO_PKG_VERSION").into() }).set(1);
        registry.register("toolmend_tool_calls", "Tool calls seen in streams, by outcome", tool_calls.clone());
        registry.register("toolmend_repair_edits", "Edits made by repairs, by kind", repair_edits.clone());
        registry.register("toolmend_strict_tools", "Tools considered for strict injection", strict_tools.clone());
        registry.register("toolmend_upstream_requests", "Requests sent upstream, by status", upstream_requests.clone());
        registry.register("toolmend_hook_runs", "Hook commands run, by result", hook_runs.clone());
        registry.register(
            "toolmend_events_dropped",
            "Events not kept for /events: a POST over max_event_bytes, one event over events_max_bytes",
            events_dropped.clone(),
        );
        registry.register("toolmend_request_duration_seconds", "Whole proxied requests", request_duration.clone());
        registry.register(
            "toolmend_overhead_seconds",
            "Time toolmend itself added to a request (parsing, repair, rewrite)",
            overhead.clone(),
        );
        registry.register("toolmend_hold_seconds", "Time a tool block's input was held back", hold.clone());
        registry.register(
            "toolmend_otel_dropped",
            "OTLP log records dropped: queue full or the collector unreachable",
            otel_dropped.clone(),
        );
        registry.register(
            "toolmend_request_memory_held_bytes",
            "Request bytes held now (bodies read whole, tools text), bounded by request_memory_bytes",
            request_memory_held.clone(),
        );
        registry.register("toolmend_build_info", "Build information", build_info);
        Self {
            registry,
            tool_calls,
            repair_edits,
            strict_tools,
            upstream_requests,
            hook_runs,
            events_dropped,
            request_duration,
            overhead,
            hold,
            otel_dropped,
            request_memory_held,
            tool_names: ToolNames::new(tool_label_limit),
            otel: None,
        }
    }

    /// Every count from now on is also added to these OTLP counters.
    pub fn mirror_to(&mut self, instruments: Instruments) {
        self.otel = Some(instruments);
    }

    pub fn count_tool_call(&self, tool: &str, outcome: &str) {
        let tool = self.tool_names.label(tool);
        if let Some(otel) = &self.otel {
            otel.tool_calls
                .add(1, &[KeyValue::new("tool", tool.clone()), KeyValue::new("outcome", outcome.to_string())]);
        }
        self.tool_calls.get_or_create(&ToolLabels { tool, outcome: outcome.into() }).inc();
    }

    /// Tool labels used so far, sorted, then `other` (whether or not anything counted as it).
    pub fn tool_labels(&self) -> Vec<String> {
        let mut labels: Vec<String> =
            self.tool_names.seen.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
        labels.sort();
        labels.push("other".into());
        labels
    }

    /// Calls counted so far for a tool label and an outcome.
    pub fn tool_call_count(&self, tool: &str, outcome: &str) -> u64 {
        let labels = ToolLabels { tool: tool.into(), outcome: outcome.into() };
        self.tool_calls.get(&labels).map_or(0, |counter| counter.get())
    }

    pub fn count_edit(&self, kind: &str) {
        if let Some(otel) = &self.otel {
            otel.repair_edits.add(1, &[KeyValue::new("kind", kind.to_string())]);
        }
        self.repair_edits.get_or_create(&KindLabels { kind: kind.into() }).inc();
    }

    pub fn count_upstream(&self, status: &str) {
        if let Some(otel) = &self.otel {
            otel.upstream_requests.add(1, &[KeyValue::new("status", status.to_string())]);
        }
        self.upstream_requests.get_or_create(&StatusLabels { status: status.into() }).inc();
    }

    pub fn count_strict(&self, result: &str) {
        if let Some(otel) = &self.otel {
            otel.strict_tools.add(1, &[KeyValue::new("result", result.to_string())]);
        }
        self.strict_tools.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    pub fn count_hook(&self, result: &str) {
        if let Some(otel) = &self.otel {
            otel.hook_runs.add(1, &[KeyValue::new("result", result.to_string())]);
        }
        self.hook_runs.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    pub fn count_event_dropped(&self, reason: &str) {
        self.events_dropped.get_or_create(&ReasonLabels { reason: reason.into() }).inc();
    }

    /// The Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("writing to a String cannot fail");
        text
    }
}

/// A bounded set of tool names used as label values.
struct ToolNames {
    limit: usize,
    seen: Mutex<HashSet<String>>,
}

impl ToolNames {
    fn new(limit: usize) -> Self {
        Self { limit, seen: Mutex::new(HashSet::new()) }
    }

    fn label(&self, tool: &str) -> String {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(tool) {
            return tool.to_string();
        }
        if seen.len() < self.limit {
            seen.insert(tool.to_string());
            return tool.to_string();
        }
        "other".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_labels_are_capped() {
        let metrics = Metrics::new(2);
        for tool in ["a", "b", "c", "d", "a"] {
            metrics.count_tool_call(tool, "repaired");
        }
        let text = metrics.render();
        assert!(text.contains(r#"toolmend_tool_calls_total{tool="a",outcome="repaired"} 2"#), "{text}");
        assert!(text.contains(r#"toolmend_tool_calls_total{tool="other",outcome="repaired"} 2"#), "{text}");
        assert!(!text.contains(r#"tool="c""#));
        assert_eq!(metrics.tool_labels(), ["a", "b", "other"]);
        assert_eq!(metrics.tool_call_count("a", "repaired"), 2);
        assert_eq!(metrics.tool_call_count("other", "repaired"), 2);
        assert_eq!(metrics.tool_call_count("a", "refused"), 0);
        assert!(text.contains("toolmend_build_info{version="));
    }
}
