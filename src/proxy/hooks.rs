//! `[[hooks]]`: commands run with an event's JSON on stdin, where a Claude Code hook would have
//! run for a call it never saw. They never delay the stream: each runs in the background, with
//! a timeout and a bound on how many run at once (past it, the run is dropped and counted).

use crate::telemetry::{Event, Metrics};
use serde::Deserialize;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

/// Hook commands running at once, at most.
const MAX_CONCURRENT_HOOKS: usize = 8;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// Event kinds that run the command (`repaired`, `refused`, `strict_rejected`, ...).
    pub on: Vec<String>,
    /// Run with `sh -c`.
    pub command: String,
    #[serde(default = "default_timeout")]
    pub timeout_seconds: u64,
}

fn default_timeout() -> u64 {
    10
}

pub struct Hooks {
    hooks: Vec<HookConfig>,
    slots: Arc<Semaphore>,
}

impl Hooks {
    pub fn new(hooks: Vec<HookConfig>) -> Self {
        Self { hooks, slots: Arc::new(Semaphore::new(MAX_CONCURRENT_HOOKS)) }
    }

    /// Starts, in the background, every hook that wants `event`'s kind.
    pub(crate) fn run_for(&self, event: &Event, metrics: &Arc<Metrics>, tracker: &TaskTracker) {
        for hook in self.hooks.iter().filter(|h| h.on.contains(&event.kind)) {
            let Ok(slot) = self.slots.clone().try_acquire_owned() else {
                metrics.count_hook("dropped");
                tracing::warn!(command = %hook.command, "hook dropped: too many running");
                continue;
            };
            let (metrics, hook, event) = (metrics.clone(), hook.clone(), event.clone());
            tracker.spawn(async move {
                let result = run(&hook, &event).await;
                drop(slot);
                if let Err(why) = &result {
                    let cause = std::error::Error::source(why).map(|c| format!(": {c}")).unwrap_or_default();
                    tracing::warn!(command = %hook.command, why = %format!("{why}{cause}"), "hook failed");
                }
                metrics.count_hook(match result {
                    Ok(()) => "ok",
                    Err(HookFailure::TimedOut) => "timeout",
                    Err(_) => "failed",
                });
            });
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum HookFailure {
    #[error("could not start")]
    Start(#[source] std::io::Error),
    #[error("waiting for it failed")]
    Wait(#[source] std::io::Error),
    #[error("exited with {0}")]
    Exit(std::process::ExitStatus),
    #[error("timed out")]
    TimedOut,
}

async fn run(hook: &HookConfig, event: &Event) -> Result<(), HookFailure> {
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", &hook.command])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(HookFailure::Start)?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let payload = serde_json::to_vec(event).unwrap_or_default();
    let work = async {
        // A command that does not read its stdin is not a failure.
        let _ = stdin.write_all(&payload).await;
        drop(stdin);
        child.wait().await
    };
    match tokio::time::timeout(Duration::from_secs(hook.timeout_seconds), work).await {
        Err(_) => Err(HookFailure::TimedOut),
        Ok(Err(error)) => Err(HookFailure::Wait(error)),
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(HookFailure::Exit(status)),
    }
}
