//! What toolmend reports about itself: Prometheus metrics and a log of recent events.

mod events;
mod metrics;

pub use events::{Event, EventLog, Recorded, EVENT_KINDS};
pub use metrics::Metrics;
