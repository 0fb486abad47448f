//! Recent events as JSON, newest last: what toolmend decided, for `/events` and hook commands.

use serde::Serialize;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Event {
    pub id: u64,
    /// RFC 3339, UTC.
    pub time: String,
    pub kind: String,
    #[serde(flatten)]
    pub fields: serde_json::Map<String, Value>,
}

/// A ring buffer of the last `capacity` events with increasing ids.
pub struct EventLog {
    capacity: usize,
    inner: Mutex<(u64, VecDeque<Event>)>,
}

impl EventLog {
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), inner: Mutex::new((0, VecDeque::new())) }
    }

    /// Records an event; `fields` must be a JSON object. Returns the stored event.
    pub fn push(&self, kind: &str, fields: Value) -> Event {
        let fields = match fields {
            Value::Object(map) => map,
            other => serde_json::Map::from_iter([("value".to_string(), other)]),
        };
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.0 += 1;
        let event = Event { id: inner.0, time: rfc3339_now(), kind: kind.to_string(), fields };
        if inner.1.len() == self.capacity {
            inner.1.pop_front();
        }
        inner.1.push_back(event.clone());
        event
    }

    /// Events with an id greater than `since`, oldest first.
    pub fn since(&self, since: u64) -> Vec<Event> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.1.iter().filter(|e| e.id > since).cloned().collect()
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
        let log = EventLog::new(2);
        for n in 0..3 {
            log.push("repaired", json!({"n": n}));
        }
        let all = log.since(0);
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(log.since(2).len(), 1);
        assert_eq!(all[1].fields["n"], 2);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
