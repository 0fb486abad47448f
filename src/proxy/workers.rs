//! The sidecar's worker threads: each runs a single-threaded runtime that serves the
//! connections handed to it to their end, with an upstream client of its own.
//! A request, its upstream request and its stream then live on one thread: a body chunk passed
//! from the client side to the upstream side is a wake on the same thread, not a hand-off
//! through the kernel to another worker (BENCHMARKS.md, third pass: a fifth of the context
//! switches and about 30% less CPU per long-session request than one multi-threaded runtime).

use super::connections::{self, Inbox};
use super::upstream_client::UpstreamClient;
use super::{router, App};
use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

thread_local! {
    /// This worker's upstream client: its connections are driven by this thread's runtime.
    static WORKER_CLIENT: OnceCell<UpstreamClient> = const { OnceCell::new() };
}

/// The upstream client for a request served on this thread: the worker's own, or the shared
/// one off a worker thread.
pub(super) fn client(app: &App) -> UpstreamClient {
    WORKER_CLIENT.with(|client| client.get().cloned()).unwrap_or_else(|| app.client.clone())
}

/// The default number of workers: one per CPU the process may use.
pub fn default_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Running workers.
pub(super) struct Workers {
    /// Each fires when its worker stopped serving (shutdown and its connections closed).
    served: Vec<oneshot::Receiver<()>>,
    /// Ends the workers' runtimes (and whatever they still run).
    stop: CancellationToken,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// Starts `count` workers; connections reach them through the returned inboxes.
    pub(super) fn start(
        app: Arc<App>,
        count: usize,
        header_read_timeout: Duration,
        shutdown: CancellationToken,
    ) -> std::io::Result<(Self, Vec<Inbox>)> {
        // Built up as the threads start: if one cannot start, dropping it stops the others.
        let mut workers = Self { served: Vec::new(), stop: CancellationToken::new(), threads: Vec::new() };
        let mut inboxes = Vec::new();
        for index in 0..count.max(1) {
            let (inbox, incoming) = connections::inbox();
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let client = app.build_client().map_err(std::io::Error::other)?;
            let (app, shutdown, stop) = (app.clone(), shutdown.clone(), workers.stop.clone());
            let (done, receiver) = oneshot::channel();
            let thread = std::thread::Builder::new().name(format!("toolmend-worker-{index}")).spawn(move || {
                WORKER_CLIENT.with(|cell| cell.set(client).ok());
                runtime.block_on(async move {
                    let serve = async {
                        let timeouts = connections::Timeouts {
                            header_read: header_read_timeout,
                            body_read: app.config.body_read_timeout,
                        };
                        connections::serve(incoming, router(app), timeouts, shutdown).await;
                        let _ = done.send(());
                        // Kept running for the tasks its requests started (hook commands).
                        std::future::pending::<()>().await
                    };
                    tokio::select! {
                        () = serve => {}
                        () = stop.cancelled() => {}
                    }
                });
                runtime.shutdown_background();
            })?;
            workers.served.push(receiver);
            workers.threads.push(thread);
            inboxes.push(inbox);
        }
        Ok((workers, inboxes))
    }

    /// Waits until every worker stopped serving.
    pub(super) async fn served(&mut self) {
        for served in &mut self.served {
            let _ = served.await;
        }
    }

    /// Ends the workers' runtimes and waits for their threads.
    pub(super) async fn stop(mut self) {
        self.stop.cancel();
        let threads = std::mem::take(&mut self.threads);
        let _ = tokio::task::spawn_blocking(move || threads.into_iter().for_each(|t| drop(t.join()))).await;
    }
}

impl Drop for Workers {
    /// A server future dropped before its end (its runtime went away) takes its workers along.
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
