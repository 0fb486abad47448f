//! What toolmend reports about itself: Prometheus metrics, a log of recent events and their
//! OpenTelemetry export.

mod events;
mod metrics;
pub mod otel;

pub use events::{Event, EventLog, Recorded, EVENT_KINDS};
pub use metrics::Metrics;
