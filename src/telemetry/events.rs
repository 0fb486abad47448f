//! Recent events as JSON, newest last: what toolmend decided, for `/events` and hook commands.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Every kind of event toolmend itself records or the PostToolBatch hook reports; `[[hooks]] on`
/// must name one of these.
pub const EVENT_KINDS: &[&str] = &[
    "repaired",
    "refused",
    "invalid",
    "strict_injected",
    "strict_skipped",
    "strict_rejected",
    "strict_adapted",
    "examples_injected",
    "examples_skipped",
    "examples_rejected",
    "upstream_error",
    "reported",
    "hook_valid",
    "hook_invalid",
    "hook_repaired",
    "hook_refused",
];

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Event {
    pub id: u64,
    /// RFC 3339, UTC.
    pub time: String,
    pub kind: String,
    #[serde(flatten)]
    pub fields: serde_json::Map<String, Value>,
}

/// The result of [`EventLog::push`]: the event (for hooks), and whether the log kept it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub event: Event,
    /// False when the event alone is larger than the log's byte budget.
    pub kept: bool,
}

/// A ring buffer of the last events with increasing ids, bounded by count and by bytes. Events
/// are kept serialized: a JSON tree costs many times its text, the text is what `/events` sends.
pub struct EventLog {
    capacity: usize,
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    last_id: u64,
    events: VecDeque<(u64, Box<RawValue>)>,
    bytes: usize,
}

impl EventLog {
    /// At most `capacity` events and `max_bytes` bytes of their JSON.
    pub fn new(capacity: usize, max_bytes: usize) -> Self {
        Self { capacity: capacity.max(1), max_bytes, inner: Mutex::new(Inner::default()) }
    }

    /// Records an event; `fields` should be a JSON object. The oldest events make room.
    pub fn push(&self, kind: &str, fields: Value) -> Recorded {
        let fields = match fields {
            Value::Object(map) => map,
            other => serde_json::Map::from_iter([("value".to_string(), other)]),
        };
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.last_id += 1;
        let event = Event { id: inner.last_id, time: rfc3339_now(), kind: kind.to_string(), fields };
        let Ok(json) = serde_json::value::to_raw_value(&event) else {
            return Recorded { event, kept: false };
        };
        let size = json.get().len();
        if size > self.max_bytes {
            return Recorded { event, kept: false };
        }
        while inner.events.len() >= self.capacity || inner.bytes + size > self.max_bytes {
            let Some((_, oldest)) = inner.events.pop_front() else { break };
            inner.bytes -= oldest.get().len();
        }
        inner.bytes += size;
        inner.events.push_back((event.id, json));
        Recorded { event, kept: true }
    }

    /// Events with an id greater than `since`, oldest first, as one JSON array.
    pub fn since_json(&self, since: u64) -> String {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::from("[");
        for (index, (_, json)) in inner.events.iter().filter(|(id, _)| *id > since).enumerate() {
            if index > 0 {
                out.push(',');
            }
            out.push_str(json.get());
        }
        out.push(']');
        out
    }

    /// Events with an id greater than `since`, oldest first.
    pub fn since(&self, since: u64) -> Vec<Event> {
        serde_json::from_str(&self.since_json(since)).unwrap_or_default()
    }

    /// Bytes of serialized events held now.
    pub fn bytes(&self) -> usize {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }
}

fn rfc3339_now() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_last_events_and_answers_since() {
        let log = EventLog::new(2, 1 << 20);
        for n in 0..3 {
            log.push("repaired", json!({"n": n}));
        }
        let all = log.since(0);
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(log.since(2).len(), 1);
        assert_eq!(all[1].fields["n"], 2);
    }

    #[test]
    fn the_log_is_bounded_by_bytes_as_well_as_count() {
        let log = EventLog::new(1000, 10_000);
        for n in 0..50 {
            assert!(log.push("reported", json!({"n": n, "pad": "x".repeat(1000)})).kept);
        }
        assert!(log.bytes() <= 10_000, "{}", log.bytes());
        let kept = log.since(0);
        assert!(kept.len() < 10 && kept.len() > 5, "{}", kept.len());
        assert_eq!(kept.last().unwrap().fields["n"], 49, "the newest stay");
        let huge = log.push("reported", json!({"pad": "x".repeat(20_000)}));
        assert!(!huge.kept, "an event over the whole budget is not kept");
        assert_eq!(log.since(0).len(), kept.len(), "and evicts nothing");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
