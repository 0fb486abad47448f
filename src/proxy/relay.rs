//! The SSE relay: upstream chunks through the stream repair to the client, keep-alive pings
//! while tool input is held, and the upstream request dropped as soon as the client goes.
//!
//! The relay is the client's body itself, polled by the connection that sends it: no task of
//! its own and no channel between it and the client, so a chunk costs no task hand-off. When
//! the client goes, hyper drops the body, and with it the upstream response.

use super::App;
use crate::schema::ToolCatalog;
use crate::stream::{ping_frame, Step, StreamOptions, StreamRepairer};
use axum::body::Body;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

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

/// The client's body: the upstream stream through the repair.
pub fn relay(app: Arc<App>, upstream: reqwest::Response, context: RelayContext) -> Body {
    Body::from_stream(Relay::new(app, upstream, context))
}

/// The client sees a failed upstream stream break as it would have without toolmend, after the
/// bytes before it: the pause lets the server flush them before it aborts.
const FLUSH_BEFORE_ABORT: Duration = Duration::from_millis(50);

/// Held input past which a chunk is fed to the repair on the blocking pool: a repair of a large
/// input can take a while, and the worker thread serves other connections meanwhile.
const FEED_ASIDE_FROM: usize = 64 << 10;

type Fed = (StreamRepairer, Step, Duration);

/// A chunk, or the stream's end, being run through the repair on the blocking pool.
struct Feeding {
    task: tokio::task::JoinHandle<Fed>,
    /// What came with it, for [`Relay::took`]: a chunk (`Some(Ok)`), the upstream's failure, or
    /// the end (`None`).
    then: Option<reqwest::Result<()>>,
}

enum Phase {
    Streaming,
    /// The upstream failed: the chunks before the failure go out, then the error.
    Failing(Pin<Box<tokio::time::Sleep>>),
    Done,
}

struct Relay {
    app: Arc<App>,
    context: RelayContext,
    machine: StreamRepairer,
    /// A chunk or the end being fed on the blocking pool, the machine with it.
    feeding: Option<Feeding>,
    upstream: BoxStream<'static, reqwest::Result<Bytes>>,
    ready: VecDeque<Bytes>,
    phase: Phase,
    overhead: Duration,
    last_sent: Instant,
    hold_started: Option<Instant>,
    /// Armed only while input is held.
    keepalive: Option<Pin<Box<tokio::time::Sleep>>>,
    recorded: bool,
}

impl Relay {
    fn new(app: Arc<App>, upstream: reqwest::Response, context: RelayContext) -> Self {
        let options = StreamOptions { max_held_bytes: app.config.max_held_bytes, ..StreamOptions::default() };
        let machine = StreamRepairer::new(context.tools.clone(), options);
        Self {
            overhead: context.rewrite_time,
            app,
            context,
            machine,
            feeding: None,
            upstream: upstream.bytes_stream().boxed(),
            ready: VecDeque::new(),
            phase: Phase::Streaming,
            last_sent: Instant::now(),
            hold_started: None,
            keepalive: None,
            recorded: false,
        }
    }

    /// Runs one upstream chunk (or its end) through the repair; with a large input held, on
    /// the blocking pool (see [`FEED_ASIDE_FROM`]): a chunk may start its repair, and the end
    /// decides it.
    fn take(&mut self, chunk: Option<reqwest::Result<Bytes>>) {
        let aside = self.machine.held_bytes() >= FEED_ASIDE_FROM;
        // An upstream error ends the input as the stream's end does; what follows differs.
        let (bytes, then) = match chunk {
            Some(Ok(bytes)) => (Some(bytes), Some(Ok(()))),
            Some(Err(error)) => (None, Some(Err(error))),
            None => (None, None),
        };
        let run = move |machine: &mut StreamRepairer| match &bytes {
            Some(bytes) => machine.feed(bytes),
            None => machine.finish(),
        };
        if aside {
            self.aside(run, then);
        } else {
            let began = Instant::now();
            let step = run(&mut self.machine);
            self.overhead += began.elapsed();
            self.took(step, then);
        }
    }

    fn aside(
        &mut self,
        run: impl FnOnce(&mut StreamRepairer) -> Step + Send + 'static,
        then: Option<reqwest::Result<()>>,
    ) {
        let placeholder = StreamRepairer::new(self.context.tools.clone(), StreamOptions::default());
        let mut machine = std::mem::replace(&mut self.machine, placeholder);
        let task = tokio::task::spawn_blocking(move || {
            let began = Instant::now();
            let step = run(&mut machine);
            (machine, step, began.elapsed())
        });
        self.feeding = Some(Feeding { task, then });
    }

    /// What a chunk gave: its frames queued for the client, its decisions reported; at the
    /// end or an upstream error, the phase that follows.
    fn took(&mut self, step: Step, chunk: Option<reqwest::Result<()>>) {
        self.report(&step);
        match (self.machine.is_holding(), self.hold_started) {
            (true, None) => self.hold_started = Some(Instant::now()),
            (false, Some(since)) => {
                self.app.metrics.hold.observe(since.elapsed().as_secs_f64());
                self.hold_started = None;
            }
            _ => {}
        }
        self.ready.extend(step.chunks);
        match chunk {
            Some(Ok(())) => {}
            Some(Err(error)) => {
                let error = error.without_url();
                tracing::warn!(%error, request_id = %self.context.request_id, "upstream stream failed");
                self.app.record_event(
                    "upstream_error",
                    serde_json::json!({"request_id": self.context.request_id, "reason": error.to_string()}),
                );
                self.phase = Phase::Failing(Box::pin(tokio::time::sleep(FLUSH_BEFORE_ABORT)));
                self.record();
            }
            None => {
                self.phase = Phase::Done;
                self.record();
            }
        }
    }

    fn report(&self, step: &Step) {
        for decision in &step.decisions {
            self.app.observe(decision, &self.context.request_id, self.context.schemas.get(&decision.tool));
        }
    }

    fn sent(&mut self, bytes: Bytes) -> Bytes {
        self.last_sent = Instant::now();
        bytes
    }

    /// A ping when input has been held for the keep-alive period with nothing sent (the
    /// machine is away while a large input is fed: it holds that input).
    fn poll_keepalive(&mut self, cx: &mut Context<'_>) -> Poll<Bytes> {
        if !self.machine.is_holding() && self.feeding.is_none() {
            self.keepalive = None;
            return Poll::Pending;
        }
        let period = self.app.config.keepalive.max(Duration::from_millis(10));
        let due = tokio::time::Instant::from_std(self.last_sent + period);
        let timer = self.keepalive.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if timer.deadline() != due {
            timer.as_mut().reset(due);
        }
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Bytes::from_static(ping_frame())),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The request's figures, once: at the stream's end, or when the client goes first.
    fn record(&mut self) {
        if std::mem::replace(&mut self.recorded, true) {
            return;
        }
        self.app.metrics.overhead.observe(self.overhead.as_secs_f64());
        self.app.metrics.request_duration.observe(self.context.started.elapsed().as_secs_f64());
    }
}

impl Stream for Relay {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(chunk) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(this.sent(chunk))));
            }
            if let Some(feeding) = &mut this.feeding {
                let fed = match Pin::new(&mut feeding.task).poll(cx) {
                    Poll::Ready(fed) => fed,
                    // The input is held while its repair runs: the client is kept alive.
                    Poll::Pending => return this.poll_keepalive(cx).map(|ping| Some(Ok(this.sent(ping)))),
                };
                let then = this.feeding.take().and_then(|feeding| feeding.then);
                match fed {
                    Ok((machine, step, took)) => {
                        this.machine = machine;
                        this.overhead += took;
                        this.took(step, then);
                    }
                    // The repair panicked: the stream cannot go on as it came.
                    Err(error) => {
                        tracing::error!(%error, request_id = %this.context.request_id, "stream repair failed");
                        this.phase = Phase::Done;
                        this.record();
                        return Poll::Ready(Some(Err(std::io::Error::other("stream repair failed"))));
                    }
                }
                continue;
            }
            match &mut this.phase {
                Phase::Done => return Poll::Ready(None),
                Phase::Failing(pause) => {
                    std::task::ready!(pause.as_mut().poll(cx));
                    this.phase = Phase::Done;
                    return Poll::Ready(Some(Err(std::io::Error::other("upstream stream failed"))));
                }
                Phase::Streaming => {}
            }
            match this.upstream.poll_next_unpin(cx) {
                Poll::Ready(chunk) => this.take(chunk),
                Poll::Pending => return this.poll_keepalive(cx).map(|ping| Some(Ok(this.sent(ping)))),
            }
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.record();
    }
}
