//! The state of one running sidecar, and everything it does with a decision: metrics, events,
//! hook commands, the capture file and a log line.

use super::budget::RequestMemory;
use super::capture::Capture;
use super::config::Config;
use super::host::AllowedHosts;
use super::upstream_client::{ClientError, UpstreamClient};
use super::{adaptive, examples, hooks, ProxyError};
use crate::repair::Status;
use crate::schema::SchemaCache;
use crate::stream::Decision;
use crate::telemetry::otel::Otel;
use crate::telemetry::{Event, EventLog, Metrics};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::task::TaskTracker;

/// Shared state of one running sidecar.
pub struct App {
    pub config: Config,
    pub client: UpstreamClient,
    pub metrics: Arc<Metrics>,
    pub events: EventLog,
    pub schemas: SchemaCache,
    pub capture: Option<Capture>,
    pub tracker: TaskTracker,
    /// Request bytes held at once, over all requests (`request_memory_bytes`).
    pub(crate) request_memory: RequestMemory,
    pub(crate) hosts: AllowedHosts,
    hooks: hooks::Hooks,
    otel: Option<Otel>,
    request_counter: AtomicU64,
    /// Example inputs per tool, from the config and its examples file.
    pub examples: examples::ExampleSet,
    /// Tools adaptive strict has chosen.
    pub adapted: adaptive::AdaptedTools,
    /// Rewrites (strict tool sets, example sets) the API rejected: never injected again in
    /// this process.
    rejected_rewrites: Mutex<HashSet<u64>>,
    /// Rewrites already reported as events.
    reported_rewrites: Mutex<HashSet<u64>>,
}

impl App {
    pub fn new(config: Config) -> Result<Self, ProxyError> {
        config.check()?;
        crate::init_tls();
        let client = build_client().map_err(ProxyError::Client)?;
        let capture = match &config.capture {
            Some(path) => {
                Some(Capture::open(path).map_err(|source| ProxyError::Capture { path: path.clone(), source })?)
            }
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
            request_memory: RequestMemory::new(config.request_memory_bytes, metrics.request_memory_held.clone()),
            metrics: Arc::new(metrics),
            otel,
            events: EventLog::new(config.events_capacity, config.events_max_bytes),
            schemas: SchemaCache::with_max_bytes(4096, config.schema_cache_bytes),
            capture,
            client,
            tracker: TaskTracker::new(),
            hosts: AllowedHosts::new(&config),
            hooks: hooks::Hooks::new(config.hooks.clone()),
            request_counter: AtomicU64::new(0),
            examples: examples::ExampleSet::load(&config.examples)?,
            adapted: adaptive::AdaptedTools::load(config.strict.state_file.as_deref())?,
            rejected_rewrites: Default::default(),
            reported_rewrites: Default::default(),
            config,
        })
    }

    /// A new upstream client, with no connections shared with any other.
    pub(crate) fn build_client(&self) -> Result<UpstreamClient, ClientError> {
        build_client()
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

    /// Records an event and runs the hooks that want it.
    pub(crate) fn record_event(&self, kind: &str, fields: Value) -> Event {
        let recorded = self.events.push(kind, fields);
        if let Some(otel) = &self.otel {
            otel.export_event(&recorded.event);
        }
        if !recorded.kept {
            self.metrics.count_event_dropped("over_events_max_bytes");
            tracing::warn!(kind, "event larger than events_max_bytes: not kept for /events");
        }
        self.hooks.run_for(&recorded.event, &self.metrics, &self.tracker);
        recorded.event
    }

    pub(crate) fn observe(&self, decision: &Decision, request_id: &str, schema: Option<&Value>) {
        let outcome = &decision.outcome;
        let status = outcome.status.as_str();
        self.metrics.count_tool_call(&decision.tool, status);
        for edit in &outcome.edits {
            self.metrics.count_edit(edit.kind.name());
        }
        if outcome.status == Status::Valid {
            return;
        }
        self.adapt_strict(decision, request_id);
        let reason = outcome.reason.as_ref();
        match outcome.status {
            Status::Repaired => {
                tracing::info!(tool = %decision.tool, tool_use_id = %decision.tool_use_id, edits = outcome.edits.len(), "repaired tool input")
            }
            _ => {
                tracing::info!(tool = %decision.tool, tool_use_id = %decision.tool_use_id, reason = %reason.map(|r| r.to_string()).unwrap_or_default(), "refused to repair tool input")
            }
        }
        if let Some(capture) = &self.capture {
            capture.write(&json!({
                "id": decision.tool_use_id,
                "tool": decision.tool,
                "schema": schema,
                "raw": decision.raw,
                "stop_reason": decision.stop_reason,
                "request_id": request_id,
                "status": status,
                "input": outcome.input,
                "edits": outcome.edits,
                "reason": reason,
            }));
        }
        let redact = self.config.redact_inputs;
        self.record_event(
            status,
            json!({
                "tool": decision.tool,
                "tool_use_id": decision.tool_use_id,
                "request_id": request_id,
                "outcome": status,
                "stop_reason": decision.stop_reason,
                "edits": outcome.edits,
                "reason": reason,
                "raw": if redact { Value::Null } else { json!(decision.raw) },
                "input": if redact { None } else { outcome.input.clone() },
                // The exact text the re-issued call carried (the stream sends `to_string()`).
                "sent": match (&outcome.input, outcome.status) {
                    (Some(input), Status::Repaired) if !redact => Some(input.to_string()),
                    _ => None,
                },
            }),
        );
    }
}

fn build_client() -> Result<UpstreamClient, ClientError> {
    UpstreamClient::new()
}
