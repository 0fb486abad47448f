//! The SSE relay: upstream chunks through the stream repair to the client, keep-alive pings
//! while tool input is held, and the upstream request dropped as soon as the client goes.

use super::App;
use crate::schema::ToolCatalog;
use crate::stream::{ping_frame, Step, StreamOptions, StreamRepairer};
use axum::body::Body;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

type Chunk = Result<Bytes, std::io::Error>;

/// What the relay needs to know about the request it serves.
pub struct RelayContext {
    pub tools: Arc<ToolCatalog>,
    /// Raw schemas by tool name, for the capture file.
    pub schemas: HashMap<String, Value>,
    pub request_id: String,
    pub started: Instant,
    /// Time spent rewriting the request (strict injection), part of the overhead.
    pub rewrite_time: Duration,
}

/// Starts the relay task and returns the client's body.
pub fn relay(app: Arc<App>, upstream: reqwest::Response, context: RelayContext) -> Body {
    let (sender, receiver) = mpsc::channel::<Chunk>(64);
    let tracker = app.tracker.clone();
    tracker.spawn(run(app, upstream, context, sender));
    Body::from_stream(futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    }))
}

async fn run(app: Arc<App>, upstream: reqwest::Response, context: RelayContext, sender: mpsc::Sender<Chunk>) {
    let options = StreamOptions { max_held_bytes: app.config.max_held_bytes, ..StreamOptions::default() };
    let mut machine = StreamRepairer::new(context.tools.clone(), options);
    let mut body = upstream.bytes_stream();
    let mut overhead = context.rewrite_time;
    let mut last_sent = Instant::now();
    let mut hold_started: Option<Instant> = None;
    // The first tick one period from now: awaiting an immediate tick costs a timer round (~1 ms).
    let period = app.config.keepalive.max(Duration::from_millis(10));
    let mut keepalive = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            chunk = body.next() => {
                let ended = !matches!(chunk, Some(Ok(_)));
                let (step, error) = match chunk {
                    Some(Ok(bytes)) => {
                        let began = Instant::now();
                        let step = machine.feed(&bytes);
                        overhead += began.elapsed();
                        (step, None)
                    }
                    Some(Err(error)) => (machine.finish(), Some(error.without_url())),
                    None => (machine.finish(), None),
                };
                report(&app, &context, &step);
                match (machine.is_holding(), hold_started) {
                    (true, None) => hold_started = Some(Instant::now()),
                    (false, Some(since)) => {
                        app.metrics.hold.observe(since.elapsed().as_secs_f64());
                        hold_started = None;
                    }
                    _ => {}
                }
                if !step.chunks.is_empty() {
                    if !send_all(&sender, step.chunks).await {
                        break;
                    }
                    last_sent = Instant::now();
                }
                if let Some(error) = error {
                    tracing::warn!(%error, request_id = %context.request_id, "upstream stream failed");
                    app.record_event("upstream_error", serde_json::json!({"request_id": context.request_id, "reason": error.to_string()}));
                    // The client sees the stream break as it would have without toolmend, after
                    // the bytes above: a pause lets the server flush them before it aborts.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let _ = sender.send(Err(std::io::Error::other("upstream stream failed"))).await;
                    break;
                }
                if ended {
                    break;
                }
            }
            _ = keepalive.tick() => {
                if machine.is_holding() && last_sent.elapsed() >= app.config.keepalive {
                    if sender.send(Ok(Bytes::from_static(ping_frame()))).await.is_err() {
                        break;
                    }
                    last_sent = Instant::now();
                }
            }
            _ = sender.closed() => break,
        }
    }
    app.metrics.overhead.observe(overhead.as_secs_f64());
    app.metrics.request_duration.observe(context.started.elapsed().as_secs_f64());
}

/// Sends every chunk as it is; false once the client has gone.
async fn send_all(sender: &mpsc::Sender<Chunk>, chunks: Vec<Bytes>) -> bool {
    for chunk in chunks {
        if sender.send(Ok(chunk)).await.is_err() {
            return false;
        }
    }
    true
}

fn report(app: &App, context: &RelayContext, step: &Step) {
    for decision in &step.decisions {
        app.observe(decision, &context.request_id, context.schemas.get(&decision.tool));
    }
}
