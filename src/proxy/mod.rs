//! The sidecar: a transparent Messages API proxy that repairs tool input in the stream.
//! One router, built here, with the local endpoints (`/healthz`, `/metrics`, `/events`, the
//! live page at `GET /`) in front of the catch-all forward.

pub mod adaptive;
mod config;
pub mod examples;
mod forward;
mod headers;
pub mod hooks;
mod local;
mod observe;
mod page;
mod relay;
mod rewrite;
pub mod strict;
mod tee;
pub mod tools_rewrite;

pub use config::{Config, ConfigError, FileConfig, DEFAULT_LISTEN, DEFAULT_UPSTREAM};
pub use observe::Capture;

use crate::schema::SchemaCache;
use crate::telemetry::otel::Otel;
use crate::telemetry::{EventLog, Metrics};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("binding {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("opening the capture file {path}: {source}")]
    Capture { path: String, source: std::io::Error },
    #[error("building the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    #[error(transparent)]
    Otel(#[from] crate::telemetry::otel::OtelError),
    #[error(transparent)]
    Examples(#[from] examples::ExamplesError),
    #[error(transparent)]
    StrictState(#[from] adaptive::StateError),
}

/// Shared state of one running sidecar.
pub struct App {
    pub config: Config,
    pub client: reqwest::Client,
    pub metrics: Arc<Metrics>,
    pub events: EventLog,
    pub schemas: SchemaCache,
    pub capture: Option<Capture>,
    pub tracker: TaskTracker,
    hooks: hooks::Hooks,
    otel: Option<Otel>,
    request_counter: AtomicU64,
    /// Example inputs per tool, from the config and its examples file.
    pub examples: examples::ExampleSet,
    /// Tools adaptive strict has chosen.
    pub adapted: adaptive::AdaptedTools,
    /// Rewrites (strict tool sets, example sets) the API rejected: never injected again in
    /// this process.
    rejected_rewrites: std::sync::Mutex<std::collections::HashSet<u64>>,
    /// Rewrites already reported as events.
    reported_rewrites: std::sync::Mutex<std::collections::HashSet<u64>>,
}

impl App {
    pub fn new(config: Config) -> Result<Self, ProxyError> {
        config.check()?;
        crate::init_tls();
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(30))
            .pool_idle_timeout(std::time::Duration::from_secs(60))
            .build()?;
        let capture = match &config.capture {
            Some(path) => Some(
                Capture::open(path)
                    .map_err(|source| ProxyError::Capture { path: path.display().to_string(), source })?,
            ),
            None => None,
        };
        let mut metrics = Metrics::new(config.tool_label_limit);
        let otel = match config.otel.is_enabled() {
            true => Some(Otel::start(&config.otel, metrics.otel_dropped.clone())?),
            false => None,
        };
        if let Some(instruments) = otel.as_ref().and_then(Otel::instruments) {
            metrics.mirror_to(instruments);
        }
        Ok(Self {
            metrics: Arc::new(metrics),
            otel,
            events: EventLog::new(config.events_capacity),
            schemas: SchemaCache::new(4096),
            capture,
            client,
            tracker: TaskTracker::new(),
            hooks: hooks::Hooks::new(config.hooks.clone()),
            request_counter: AtomicU64::new(0),
            examples: examples::ExampleSet::load(&config.examples)?,
            adapted: adaptive::AdaptedTools::load(config.strict.state_file.as_deref())?,
            rejected_rewrites: Default::default(),
            reported_rewrites: Default::default(),
            config,
        })
    }

    pub(crate) fn rewrite_rejected(&self, key: u64) -> bool {
        self.rejected_rewrites.lock().unwrap_or_else(|p| p.into_inner()).contains(&key)
    }

    pub(crate) fn reject_rewrite(&self, key: u64) {
        self.rejected_rewrites.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
    }

    /// True the first time a rewrite is seen (its events are reported once).
    pub(crate) fn first_sight_of_rewrite(&self, key: u64) -> bool {
        self.reported_rewrites.lock().unwrap_or_else(|p| p.into_inner()).insert(key)
    }

    pub(crate) fn next_request_id(&self) -> String {
        format!("toolmend-{}", self.request_counter.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(local::healthz))
        .route("/metrics", get(local::metrics))
        .route("/events", get(local::events).post(local::report_event))
        .merge(page::routes())
        .fallback(forward::forward)
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

    /// Serves until `shutdown` fires, then lets open streams finish for at most the drain time.
    pub async fn run(self, shutdown: CancellationToken) -> std::io::Result<()> {
        let drain = self.app.config.drain;
        let tracker = self.app.tracker.clone();
        let stop = shutdown.clone();
        // Streamed frames must leave at once, not wait for the peer's delayed ACK.
        let listener = self.listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let serve = axum::serve(listener, router(self.app)).with_graceful_shutdown(stop.cancelled_owned());
        tokio::select! {
            result = serve => result?,
            _ = async { shutdown.cancelled().await; tokio::time::sleep(drain).await } => {
                tracing::warn!("drain time over; closing open streams");
            }
        }
        tracker.close();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), tracker.wait()).await;
        Ok(())
    }
}
