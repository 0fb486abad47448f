//! The sidecar: a transparent Messages API proxy that repairs tool input in the stream.
//! One router, built here, with the local endpoints (`/healthz`, `/metrics`, `/events`, the
//! live page at `GET /`) in front of the catch-all forward.

pub mod adaptive;
mod app;
mod budget;
mod capture;
mod config;
mod connections;
pub mod examples;
mod forward;
mod headers;
pub mod hooks;
mod host;
mod local;
mod page;
mod path;
mod relay;
mod rewrite;
pub mod settings;
pub mod strict;
mod tee;
pub mod tools_rewrite;
mod upstream_client;
mod upstream_io;
mod whole_body;
mod workers;

pub use app::App;
pub use capture::Capture;
pub use config::{Config, ConfigError, FileConfig, DEFAULT_LISTEN, DEFAULT_UPSTREAM};
pub use workers::default_count as default_workers;

use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("binding {addr}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("opening the capture file {}", path.display())]
    Capture { path: PathBuf, source: std::io::Error },
    #[error("building the HTTP client")]
    Client(#[source] upstream_client::ClientError),
    #[error(transparent)]
    Otel(#[from] crate::telemetry::otel::OtelError),
    #[error(transparent)]
    Examples(#[from] examples::ExamplesError),
    #[error(transparent)]
    StrictState(#[from] adaptive::StateError),
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(local::healthz))
        .route("/metrics", get(local::metrics))
        .route("/events", get(local::events).post(local::report_event))
        .merge(page::routes())
        .fallback(forward::forward)
        .layer(axum::middleware::from_fn_with_state(app.clone(), host::check))
        .with_state(app)
}

/// A bound, not yet running, sidecar.
pub struct Server {
    listener: TcpListener,
    app: Arc<App>,
}

impl Server {
    pub async fn bind(config: Config) -> Result<Self, ProxyError> {
        let app = Arc::new(App::new(config)?);
        let addr = app.config.listen;
        let listener = TcpListener::bind(addr).await.map_err(|source| ProxyError::Bind { addr, source })?;
        Ok(Self { listener, app })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound listener has an address")
    }

    pub fn app(&self) -> Arc<App> {
        self.app.clone()
    }

    /// Serves on the configured number of worker threads until `shutdown` fires, then lets
    /// open streams finish for at most the drain time.
    pub async fn run(self, shutdown: CancellationToken) -> std::io::Result<()> {
        let drain = self.app.config.drain;
        let tracker = self.app.tracker.clone();
        let header_read_timeout = self.app.config.header_read_timeout;
        let count = self.app.config.workers;
        let max_connections = self.app.config.max_connections;
        let (mut workers, inboxes) = workers::Workers::start(self.app, count, header_read_timeout, shutdown.clone())?;
        let accept = connections::accept(self.listener, inboxes, max_connections, shutdown.clone());
        tokio::select! {
            () = async { accept.await; workers.served().await } => {}
            _ = async { shutdown.cancelled().await; tokio::time::sleep(drain).await } => {
                tracing::warn!("drain time over; closing open streams");
            }
        }
        tracker.close();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), tracker.wait()).await;
        workers.stop().await;
        Ok(())
    }
}
