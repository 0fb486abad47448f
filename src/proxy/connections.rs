//! Accepts client connections and serves each with hyper: a header-read timeout (a partial
//! request, or an idle keep-alive connection, is closed after `header_read_timeout`), no
//! Nagle delay for streamed frames, and a graceful end when the shutdown token fires.

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The largest read buffer of one client connection (hyper's minimum is 8 KiB; its default,
/// ~400 KB, is what an idle keep-alive connection keeps after a big request). 128 KiB reads a
/// long session's request in four reads and keeps 512 idle connections near 110 MiB
/// (BENCHMARKS.md).
const MAX_READ_BUFFER: usize = 128 << 10;

/// Serves `router` on `listener` until `shutdown` fires, then waits for open connections to
/// finish their requests (the caller bounds that wait).
pub async fn serve(listener: TcpListener, router: Router, header_read_timeout: Duration, shutdown: CancellationToken) {
    let connections = TaskTracker::new();
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
        // Streamed frames must leave at once, not wait for the peer's delayed ACK.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let shutdown = shutdown.clone();
        connections.spawn(async move {
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
