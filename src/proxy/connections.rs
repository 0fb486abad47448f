//! Accepts client connections and serves each with hyper: a header-read timeout (a partial
//! request, or an idle keep-alive connection, is closed after `header_read_timeout`), no
//! Nagle delay for streamed frames, and a graceful end when the shutdown token fires.
//! One loop accepts; each connection is then served on the worker with the fewest open.

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The largest read buffer of one client connection (hyper's minimum is 8 KiB; its default,
/// ~400 KB, is what an idle keep-alive connection keeps after a big request). 128 KiB reads a
/// long session's request in four reads and keeps 512 idle connections near 110 MiB
/// (BENCHMARKS.md).
const MAX_READ_BUFFER: usize = 128 << 10;

/// Where accepted connections go: a worker's queue and how many connections it has open.
#[derive(Clone)]
pub struct Inbox {
    queue: mpsc::UnboundedSender<std::net::TcpStream>,
    open: Arc<AtomicUsize>,
}

/// A worker's side of its [`Inbox`].
pub struct Incoming {
    queue: mpsc::UnboundedReceiver<std::net::TcpStream>,
    open: Arc<AtomicUsize>,
}

pub fn inbox() -> (Inbox, Incoming) {
    let (queue, receiver) = mpsc::unbounded_channel();
    let open = Arc::new(AtomicUsize::new(0));
    (Inbox { queue, open: open.clone() }, Incoming { queue: receiver, open })
}

/// Accepts until `shutdown` fires and hands each connection to the inbox with the fewest open
/// (a shared listener would let whichever worker wakes first take a burst of them all).
pub async fn accept(listener: TcpListener, inboxes: Vec<Inbox>, shutdown: CancellationToken) {
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        let Some(inbox) = inboxes.iter().min_by_key(|inbox| inbox.open.load(Ordering::Relaxed)) else { break };
        // Counted here, so a burst of connections spreads before any worker has run.
        inbox.open.fetch_add(1, Ordering::Relaxed);
        if let Err(error) = tcp.into_std().map(|tcp| inbox.queue.send(tcp)) {
            inbox.open.fetch_sub(1, Ordering::Relaxed);
            tracing::warn!(%error, "handing over a connection failed");
        }
    }
}

/// Serves the connections that arrive in `incoming` until `shutdown` fires (or the acceptor
/// ends), then waits for them to finish their requests (the caller bounds that wait).
pub async fn serve(mut incoming: Incoming, router: Router, header_read_timeout: Duration, shutdown: CancellationToken) {
    let connections = TaskTracker::new();
    loop {
        let tcp = tokio::select! {
            tcp = incoming.queue.recv() => match tcp {
                Some(tcp) => tcp,
                None => break,
            },
            _ = shutdown.cancelled() => break,
        };
        let open = OpenConnection(incoming.open.clone());
        let Ok(tcp) = TcpStream::from_std(tcp) else { continue };
        // Streamed frames must leave at once, not wait for the peer's delayed ACK.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let _open = open;
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
            // A connection keeps its read buffer while it lives: capped so that idle keep-alive
            // connections after big requests do not hold ~400 KB each (hyper's default cap).
            builder.max_buf_size(MAX_READ_BUFFER);
            let connection = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "client connection ended");
                    }
                    return;
                }
                _ = shutdown.cancelled() => connection.as_mut().graceful_shutdown(),
            }
            if let Err(error) = connection.await {
                tracing::debug!(%error, "client connection ended");
            }
        });
    }
    connections.close();
    connections.wait().await;
}

/// One open connection in its worker's count, until dropped.
struct OpenConnection(Arc<AtomicUsize>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_connections_spreads_over_the_workers() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (inboxes, mut incoming): (Vec<_>, Vec<_>) = (0..3).map(|_| inbox()).unzip();
        // The first worker already has two open connections: it gets none until the others catch up.
        inboxes[0].open.fetch_add(2, Ordering::Relaxed);
        let shutdown = CancellationToken::new();
        let accepting = tokio::spawn(accept(listener, inboxes, shutdown.clone()));
        let clients: Vec<_> = futures_util::future::join_all((0..10).map(|_| TcpStream::connect(addr))).await;
        let mut received = vec![0; 3];
        for _ in 0..10 {
            let next = incoming.iter_mut().map(|worker| Box::pin(worker.queue.recv()));
            let (_, index, _) = futures_util::future::select_all(next).await;
            received[index] += 1;
        }
        drop(clients);
        shutdown.cancel();
        accepting.await.unwrap();
        assert_eq!(received, vec![2, 4, 4], "each connection went to the worker with the fewest open");
    }
}
