//! The bounded queue in front of the OTLP log exporter. The SDK's batch processor drops records
//! when its queue is full without telling anyone, so records go through a queue of our own: the
//! proxy only ever `try_send`s, one thread sends batches, and every record that does not reach
//! the collector (queue full, export failed) is counted.

use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter, LogProcessor, SdkLogRecord};
use prometheus_client::metrics::counter::Counter;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Records sent in one export request, at most.
const MAX_BATCH: usize = 512;

type Item = Box<(SdkLogRecord, InstrumentationScope)>;

#[derive(Debug)]
pub(super) struct QueueProcessor {
    sender: SyncSender<Item>,
    dropped: Counter,
}

/// Starts the thread that sends what the returned processor queues. Once the processor is
/// dropped, the thread sends what is left, then says so on the returned channel.
pub(super) fn start<E: LogExporter + 'static>(
    exporter: E,
    capacity: usize,
    dropped: Counter,
) -> std::io::Result<(QueueProcessor, Receiver<()>)> {
    let (sender, receiver) = sync_channel(capacity.max(1));
    let (finished, done) = sync_channel(1);
    let counter = dropped.clone();
    std::thread::Builder::new().name("toolmend-otlp-logs".into()).spawn(move || {
        send_batches(&exporter, &receiver, &counter);
        let _ = finished.send(());
    })?;
    Ok((QueueProcessor { sender, dropped }, done))
}

impl LogProcessor for QueueProcessor {
    fn emit(&self, record: &mut SdkLogRecord, scope: &InstrumentationScope) {
        if self.sender.try_send(Box::new((record.clone(), scope.clone()))).is_err() {
            self.dropped.inc();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
}

fn send_batches<E: LogExporter>(exporter: &E, receiver: &Receiver<Item>, dropped: &Counter) {
    let mut failing = false;
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        batch.extend(receiver.try_iter().take(MAX_BATCH - 1));
        let refs: Vec<(&SdkLogRecord, &InstrumentationScope)> = batch.iter().map(|item| (&item.0, &item.1)).collect();
        match futures_executor::block_on(exporter.export(LogBatch::new(&refs))) {
            Ok(()) if failing => {
                failing = false;
                tracing::info!("OTLP log export works again");
            }
            Ok(()) => {}
            Err(error) => {
                dropped.inc_by(batch.len() as u64);
                if !failing {
                    tracing::warn!(%error, "OTLP log export failed; records are dropped and counted until it works");
                }
                failing = true;
            }
        }
    }
    let _ = exporter.shutdown();
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::logs::{LogRecord, Logger, LoggerProvider};
    use opentelemetry_sdk::error::OTelSdkError;
    use opentelemetry_sdk::logs::SdkLoggerProvider;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// Blocks every export until the gate opens; fails them when told to.
    #[derive(Debug, Clone, Default)]
    struct TestExporter {
        gate: Arc<Mutex<()>>,
        fail: bool,
        entered: Arc<AtomicUsize>,
        received: Arc<Mutex<Vec<String>>>,
    }

    impl LogExporter for TestExporter {
        async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
            self.entered.fetch_add(1, Ordering::SeqCst);
            let _open = self.gate.lock().unwrap();
            if self.fail {
                return Err(OTelSdkError::InternalFailure("collector down".into()));
            }
            let mut received = self.received.lock().unwrap();
            received.extend(batch.iter().map(|(record, _)| format!("{:?}", record.body())));
            Ok(())
        }
    }

    fn emit(provider: &SdkLoggerProvider, n: usize) {
        let logger = provider.logger("test");
        for i in 0..n {
            let mut record = logger.create_log_record();
            record.set_body(format!("event {i}").into());
            logger.emit(record);
        }
    }

    fn wait_until(what: impl Fn() -> bool) {
        for _ in 0..500 {
            if what() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("condition not reached");
    }

    #[test]
    fn a_stuck_collector_fills_the_queue_and_the_rest_is_counted_not_waited_for() {
        let exporter = TestExporter::default();
        let gate = exporter.gate.lock().unwrap();
        let dropped = Counter::default();
        let (processor, _) = start(exporter.clone(), 4, dropped.clone()).unwrap();
        let provider = SdkLoggerProvider::builder().with_log_processor(processor).build();
        // The sending thread takes the first record and blocks in the export.
        emit(&provider, 1);
        wait_until(|| exporter.entered.load(Ordering::SeqCst) == 1);
        emit(&provider, 20);
        assert_eq!(dropped.get(), 16, "4 fit in the queue, the rest is dropped at once");
        drop(gate);
        wait_until(|| exporter.received.lock().unwrap().len() == 5);
        assert!(exporter.received.lock().unwrap()[0].contains("event 0"));
    }

    #[test]
    fn failed_exports_count_their_records_as_dropped() {
        let exporter = TestExporter { fail: true, ..TestExporter::default() };
        let dropped = Counter::default();
        let (processor, _) = start(exporter, 100, dropped.clone()).unwrap();
        let provider = SdkLoggerProvider::builder().with_log_processor(processor).build();
        emit(&provider, 3);
        wait_until(|| dropped.get() == 3);
    }
}
