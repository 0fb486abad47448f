//! One bound on the request bytes the sidecar holds at once, over all its requests: bodies read
//! whole (for a rewrite: strict or examples injection) and the `tools` text a streamed body is
//! read for. Each body is bounded by `max_request_bytes`; without a total,
//! many at once would hold that many times over (attack round 7, D2: 24 chunked 30 MiB bodies
//! reached 1.3 GiB). Bytes are taken without waiting: a request that cannot have them is not
//! held back behind others (which could hold it for ever, each with part of what it needs).

use prometheus_client::metrics::gauge::Gauge;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The bytes left to hold.
#[derive(Clone)]
pub struct RequestMemory {
    free: Arc<Semaphore>,
    total: usize,
    /// The bytes held now, shown on `/metrics`.
    held: Gauge,
}

impl RequestMemory {
    pub fn new(total: usize, held: Gauge) -> Self {
        Self { free: Arc::new(Semaphore::new(total.min(Semaphore::MAX_PERMITS))), total, held }
    }

    /// The bound, as configured (`request_memory_bytes`).
    pub fn total(&self) -> usize {
        self.total
    }

    /// Nothing held yet, for one request.
    pub fn hold(&self) -> Held {
        Held { memory: self.clone(), bytes: 0 }
    }
}

/// The bytes one request holds; given back when it is dropped.
pub struct Held {
    memory: RequestMemory,
    bytes: usize,
}

impl Held {
    /// Takes `bytes` more, or nothing when they are not free.
    #[must_use]
    pub fn grow(&mut self, bytes: usize) -> bool {
        let Ok(wanted) = u32::try_from(bytes) else { return false };
        match self.memory.free.try_acquire_many(wanted) {
            Ok(permit) => {
                permit.forget();
                self.bytes += bytes;
                self.memory.held.inc_by(bytes as i64);
                true
            }
            Err(_) => false,
        }
    }

    /// Gives `bytes` back (at most what is held).
    pub fn shrink(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        self.memory.free.add_permits(bytes);
        self.memory.held.dec_by(bytes as i64);
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.shrink(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_come_back_when_shrunk_or_dropped_and_never_go_past_the_total() {
        let memory = RequestMemory::new(100, Gauge::default());
        let mut first = memory.hold();
        assert!(first.grow(60));
        let mut second = memory.hold();
        assert!(!second.grow(41), "only 40 are left");
        assert!(second.grow(40));
        assert!(!second.grow(1));
        first.shrink(10);
        assert!(second.grow(10));
        drop(first);
        assert!(second.grow(50));
        assert_eq!(second.bytes(), 100);
        assert_eq!(memory.held.get(), 100);
        second.shrink(1000);
        assert_eq!(second.bytes(), 0);
        assert_eq!(memory.held.get(), 0);
        assert!(memory.hold().grow(100), "everything was given back");
    }
}
