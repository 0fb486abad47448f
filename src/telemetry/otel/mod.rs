//! OpenTelemetry export over OTLP HTTP/protobuf, off unless an endpoint is configured: the
//! counters as OTLP metrics, every event as a log record with its fields as attributes. A
//! collector that is down or slow never slows the proxy: log records go through a bounded queue
//! to a thread of their own, metrics are sent from the SDK's reader thread, and every record
//! that does not arrive is counted in `toolmend_otel_dropped_total`.

mod attributes;
mod config;
mod metrics;
mod queue;

pub use config::{OtelConfig, DEFAULT_QUEUE_CAPACITY};
pub use metrics::Instruments;

use super::Event;
use opentelemetry::logs::{AnyValue, LogRecord, Logger, LoggerProvider, Severity};
use opentelemetry::metrics::ObservableCounter;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{LogExporter, Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::logs::{LogExporter as _, SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::Resource;
use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    #[error("{0}")]
    Config(String),
    #[error("building the OTLP {signal} exporter for {url}: {why}")]
    Exporter { signal: &'static str, url: String, why: opentelemetry_otlp::ExporterBuildError },
    #[error("starting the OTLP log thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A running export. Dropping it sends what is queued and the last metrics (for a few seconds
/// at most): a sidecar that lives for one CI job still reports it.
pub struct Otel {
    logger: Option<SdkLogger>,
    logger_provider: Option<SdkLoggerProvider>,
    /// Says when the log thread has sent its queue (in a Mutex: the App is shared across threads).
    logs_done: Option<Mutex<Receiver<()>>>,
    meter_provider: Option<SdkMeterProvider>,
    _dropped_counter: Option<ObservableCounter<u64>>,
    instruments: Option<Instruments>,
}

impl Otel {
    /// Starts the export; `dropped` counts records that never reached the collector.
    pub fn start(
        config: &OtelConfig,
        dropped: prometheus_client::metrics::counter::Counter,
    ) -> Result<Self, OtelError> {
        config.check()?;
        crate::init_tls();
        let resource = resource(config);
        let headers: HashMap<String, String> = config.headers.clone().into_iter().collect();

        let mut logger_provider = SdkLoggerProvider::builder().with_resource(resource.clone());
        let mut logs_done = None;
        if let Some(url) = config.logs_url() {
            let mut exporter = LogExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(&url)
                .with_headers(headers.clone())
                .build()
                .map_err(|why| OtelError::Exporter { signal: "logs", url, why })?;
            exporter.set_resource(&resource);
            let capacity = config.queue_capacity.unwrap_or(DEFAULT_QUEUE_CAPACITY);
            let (processor, done) = queue::start(exporter, capacity, dropped.clone())?;
            logger_provider = logger_provider.with_log_processor(processor);
            logs_done = Some(Mutex::new(done));
        }
        let logger_provider = logger_provider.build();
        let logger = logs_done.is_some().then(|| logger_provider.logger("toolmend"));

        let metrics = match config.metrics_url() {
            Some(url) => Some(metrics::start(config, url, headers, resource, dropped)?),
            None => None,
        };
        let (meter_provider, instruments, dropped_counter) = match metrics {
            Some((provider, instruments, dropped)) => (Some(provider), Some(instruments), Some(dropped)),
            None => (None, None, None),
        };
        Ok(Self {
            logger,
            logger_provider: Some(logger_provider),
            logs_done,
            meter_provider,
            _dropped_counter: dropped_counter,
            instruments,
        })
    }

    /// The OTLP counters, when metrics are exported.
    pub fn instruments(&self) -> Option<Instruments> {
        self.instruments.clone()
    }

    /// Queues the event as a log record: its kind as the body, its fields as attributes.
    pub fn export_event(&self, event: &Event) {
        let Some(logger) = &self.logger else { return };
        let mut record = logger.create_log_record();
        let now = SystemTime::now();
        record.set_timestamp(now);
        record.set_observed_timestamp(now);
        record.set_severity_number(Severity::Info);
        record.set_severity_text("INFO");
        record.set_body(AnyValue::String(event.kind.clone().into()));
        record.add_attribute("event.id", i64::try_from(event.id).unwrap_or(i64::MAX));
        record.add_attribute("kind", event.kind.clone());
        for (key, value) in &event.fields {
            if let Some(value) = attributes::any_value(value) {
                record.add_attribute(key.clone(), value);
            }
        }
        logger.emit(record);
    }
}

/// How long dropping the export waits for queued log records to go out.
const LOGS_GRACE: Duration = Duration::from_secs(5);

impl Drop for Otel {
    fn drop(&mut self) {
        // Dropping the last handles to the log processor lets its thread send what is queued.
        self.logger.take();
        self.logger_provider.take();
        if let Some(done) = self.logs_done.take() {
            let _ = done.into_inner().map(|done| done.recv_timeout(LOGS_GRACE));
        }
        // A last metrics export, from the reader's own thread; bounded by the exporter timeout.
        if let Some(provider) = self.meter_provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// `service.name` (toolmend unless configured), `service.version`, the SDK's own attributes,
/// then the configured ones.
fn resource(config: &OtelConfig) -> Resource {
    let mut builder = Resource::builder_empty()
        .with_detector(Box::new(opentelemetry_sdk::resource::TelemetryResourceDetector))
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .with_service_name("toolmend");
    builder = builder.with_attributes(
        config.resource_attributes.iter().map(|(key, value)| KeyValue::new(key.clone(), value.clone())),
    );
    if let Some(name) = &config.service_name {
        builder = builder.with_service_name(name.clone());
    }
    builder.build()
}
