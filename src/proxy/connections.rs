//! Accepts client connections and serves each with hyper: a header-read timeout (a partial
//! request, or an idle keep-alive connection, is closed after `header_read_timeout`), a
//! whole-body deadline (a body still arriving `body_read_timeout` after its head gets a 408), no
//! Nagle delay for streamed frames, and a graceful end when the shutdown token fires.
//! One loop accepts, closing connections above `max_connections` at once (slow clients must
//! not take every file descriptor); each connection is then served on the worker with the
//! fewest open.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{BoxError, Router};
use hyper::body::{Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
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

/// The default cap on open client connections: what the soft file-descriptor limit leaves
/// room for (each streamed request holds its client's and its upstream's), at most 4096.
pub fn default_max_connections() -> usize {
    const MOST: usize = 4096;
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes into the struct it is given, nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            // 64 kept for the listener, logs, the capture file and hook commands.
            let files = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
            return (files.saturating_sub(64) / 2).clamp(16, MOST);
        }
    }
    MOST
}

/// Accepts until `shutdown` fires and hands each connection to the inbox with the fewest open
/// (a shared listener would let whichever worker wakes first take a burst of them all); one
/// accepted when `max_connections` are open is closed at once.
pub async fn accept(listener: TcpListener, inboxes: Vec<Inbox>, max_connections: usize, shutdown: CancellationToken) {
    // Logged once per spell at the cap, not once per refused connection.
    let mut at_cap = false;
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
        let open: usize = inboxes.iter().map(|inbox| inbox.open.load(Ordering::Relaxed)).sum();
        if open >= max_connections {
            if !at_cap {
                tracing::warn!(max_connections, "connection refused: max_connections are open");
            }
            at_cap = true;
            drop(tcp);
            continue;
        }
        at_cap = false;
        let Some(inbox) = inboxes.iter().min_by_key(|inbox| inbox.open.load(Ordering::Relaxed)) else { break };
        // Counted here, so a burst of connections spreads before any worker has run.
        inbox.open.fetch_add(1, Ordering::Relaxed);
        if let Err(error) = tcp.into_std().map(|tcp| inbox.queue.send(tcp)) {
            inbox.open.fetch_sub(1, Ordering::Relaxed);
            tracing::warn!(%error, "handing over a connection failed");
        }
    }
}

/// How long a client may take to send a request's head, and then its body.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub header_read: Duration,
    pub body_read: Duration,
}

/// Serves the connections that arrive in `incoming` until `shutdown` fires (or the acceptor
/// ends), then waits for them to finish their requests (the caller bounds that wait).
pub async fn serve(mut incoming: Incoming, router: Router, timeouts: Timeouts, shutdown: CancellationToken) {
    let header_read_timeout = timeouts.header_read;
    let router =
        router.layer(axum::middleware::from_fn(move |request, next| body_deadline(timeouts.body_read, request, next)));
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

/// The layer that gives a request's body its deadline; a response made after the deadline
/// cut the body (a 413 or 502 from the body's error) becomes a 408 that says why.
async fn body_deadline(limit: Duration, request: Request, next: Next) -> Response {
    let expired = Arc::new(AtomicBool::new(false));
    let request = request.map(|body| {
        let sleep = Box::pin(tokio::time::sleep(limit));
        Body::new(Deadline { body, sleep, limit, expired: expired.clone() })
    });
    let response = next.run(request).await;
    match expired.load(Ordering::Relaxed) {
        false => response,
        true => {
            tracing::warn!(seconds = limit.as_secs(), "request refused: its body did not arrive in time");
            let message = format!(
                "toolmend: the request body did not arrive within {} s (body_read_timeout_seconds)",
                limit.as_secs()
            );
            let body = serde_json::json!({"type": "error", "error": {"type": "timeout_error", "message": message}});
            (StatusCode::REQUEST_TIMEOUT, axum::Json(body)).into_response()
        }
    }
}

/// A request body that fails once its deadline passes before its end.
struct Deadline {
    body: Body,
    sleep: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
    expired: Arc<AtomicBool>,
}

#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {} s", .0.as_secs())]
struct BodyTimedOut(Duration);

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.expired.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(BodyTimedOut(self.limit).into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
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
        let accepting = tokio::spawn(accept(listener, inboxes, usize::MAX, shutdown.clone()));
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
