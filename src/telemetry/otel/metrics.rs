//! The counters as OTLP metrics: instruments fed by [`crate::telemetry::Metrics`] next to its
//! Prometheus counters, sent by the SDK's periodic reader from its own thread.

use super::{OtelConfig, OtelError};
use opentelemetry::metrics::{Counter, MeterProvider, ObservableCounter};
use opentelemetry_otlp::{MetricExporter, Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::Resource;
use std::collections::HashMap;
use std::time::Duration;

/// The OTLP counterparts of the Prometheus counters, with the same names and labels.
#[derive(Clone)]
pub struct Instruments {
    pub(in crate::telemetry) tool_calls: Counter<u64>,
    pub(in crate::telemetry) repair_edits: Counter<u64>,
    pub(in crate::telemetry) strict_tools: Counter<u64>,
    pub(in crate::telemetry) upstream_requests: Counter<u64>,
    pub(in crate::telemetry) hook_runs: Counter<u64>,
}

/// The meter provider sending to `url`, the counters, and `toolmend_otel_dropped` read from
/// the Prometheus counter `dropped`.
pub(super) fn start(
    config: &OtelConfig,
    url: String,
    headers: HashMap<String, String>,
    resource: Resource,
    dropped: prometheus_client::metrics::counter::Counter,
) -> Result<(SdkMeterProvider, Instruments, ObservableCounter<u64>), OtelError> {
    let exporter = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(&url)
        .with_headers(headers)
        .build()
        .map_err(|why| OtelError::Exporter { signal: "metrics", url, why })?;
    let mut reader = PeriodicReader::builder(exporter);
    if let Some(ms) = config.metric_export_interval_ms {
        reader = reader.with_interval(Duration::from_millis(ms.max(1)));
    }
    let provider = SdkMeterProvider::builder().with_resource(resource).with_reader(reader.build()).build();
    let meter = provider.meter("toolmend");
    let counter =
        |name: &'static str, description: &'static str| meter.u64_counter(name).with_description(description).build();
    let instruments = Instruments {
        tool_calls: counter("toolmend_tool_calls", "Tool calls seen in streams, by outcome"),
        repair_edits: counter("toolmend_repair_edits", "Edits made by repairs, by kind"),
        strict_tools: counter("toolmend_strict_tools", "Tools considered for strict injection"),
        upstream_requests: counter("toolmend_upstream_requests", "Requests sent upstream, by status"),
        hook_runs: counter("toolmend_hook_runs", "Hook commands run, by result"),
    };
    let dropped = meter
        .u64_observable_counter("toolmend_otel_dropped")
        .with_description("OTLP log records dropped: queue full or the collector unreachable")
        .with_callback(move |observer| observer.observe(dropped.get(), &[]))
        .build();
    Ok((provider, instruments, dropped))
}
