//! Adaptive strict (`[strict] mode = "adaptive"`): a tool whose call was repaired, refused or
//! invalid is made strict from the next request on. The sidecar is the one component that sees
//! which tools fail, so it keeps that set, in a small state file that outlives restarts.

use super::App;
use crate::repair::Status;
use crate::stream::Decision;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why a tool was adapted: the call that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adaptation {
    pub tool: String,
    pub tool_use_id: String,
    pub outcome: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    adapted: Vec<Adaptation>,
}

/// A state file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("strict state file {path}: {message}")]
pub struct StateError {
    pub path: String,
    pub message: String,
}

/// The adapted tools, by name.
#[derive(Debug, Default)]
pub struct AdaptedTools {
    path: Option<PathBuf>,
    tools: Mutex<BTreeMap<String, Adaptation>>,
}

/// Reads a state file; a file that does not exist yet holds no tools.
pub fn read_state(path: &Path) -> Result<Vec<Adaptation>, StateError> {
    let error = |message: String| StateError { path: path.display().to_string(), message };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(error(e.to_string())),
    };
    let state: StateFile =
        serde_json::from_str(&text).map_err(|e| error(format!("line {} column {}: {e}", e.line(), e.column())))?;
    Ok(state.adapted)
}

impl AdaptedTools {
    pub fn load(path: Option<&Path>) -> Result<Self, StateError> {
        let adapted = match path {
            Some(path) => read_state(path)?,
            None => Vec::new(),
        };
        let tools = adapted.into_iter().map(|a| (a.tool.clone(), a)).collect();
        Ok(Self { path: path.map(Path::to_path_buf), tools: Mutex::new(tools) })
    }

    pub fn names(&self) -> BTreeSet<String> {
        self.lock().keys().cloned().collect()
    }

    /// Adds a tool; false if it was adapted already.
    fn adapt(&self, adaptation: Adaptation) -> bool {
        let mut tools = self.lock();
        if tools.contains_key(&adaptation.tool) {
            return false;
        }
        tools.insert(adaptation.tool.clone(), adaptation);
        self.persist(&tools);
        true
    }

    /// Removes the given tools; returns those that were adapted.
    fn remove(&self, names: &[String]) -> Vec<String> {
        let mut tools = self.lock();
        let removed: Vec<String> = names.iter().filter(|n| tools.remove(n.as_str()).is_some()).cloned().collect();
        if !removed.is_empty() {
            self.persist(&tools);
        }
        removed
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Adaptation>> {
        self.tools.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the whole set to a fresh 0600 file renamed over the old one, so a crash leaves
    /// either the old set or the new one. A failure is logged; the set in memory still holds.
    fn persist(&self, tools: &BTreeMap<String, Adaptation>) {
        let Some(path) = &self.path else { return };
        let state = StateFile { adapted: tools.values().cloned().collect() };
        let staging = path.with_extension("tmp");
        let written = (|| {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)?;
            }
            let _ = std::fs::remove_file(&staging);
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&staging)?;
            writeln!(file, "{}", serde_json::to_string_pretty(&state)?)?;
            file.sync_all()?;
            std::fs::rename(&staging, path)
        })();
        if let Err(error) = written {
            tracing::warn!(%error, path = %path.display(), "writing the strict state file failed");
        }
    }
}

impl App {
    /// In adaptive mode, a call that was not valid makes its tool strict from the next request.
    pub(crate) fn adapt_strict(&self, decision: &Decision, request_id: &str) {
        if !self.config.strict.is_adaptive() || decision.outcome.status == Status::Valid {
            return;
        }
        let outcome = decision.outcome.status.as_str().to_string();
        let adaptation = Adaptation { tool: decision.tool.clone(), tool_use_id: decision.tool_use_id.clone(), outcome };
        if !self.adapted.adapt(adaptation.clone()) {
            return;
        }
        self.metrics.count_strict("adapted");
        tracing::info!(tool = %adaptation.tool, tool_use_id = %adaptation.tool_use_id, "strict from the next request on");
        self.record_event(
            "strict_adapted",
            json!({"tool": adaptation.tool, "tool_use_id": adaptation.tool_use_id,
                   "request_id": request_id, "outcome": adaptation.outcome}),
        );
    }

    /// Tools the API rejected as strict leave the adapted set; returns those that were in it.
    pub(crate) fn drop_adapted(&self, tools: &[String]) -> Vec<String> {
        let removed = self.adapted.remove(tools);
        for _ in &removed {
            self.metrics.count_strict("adaptation_dropped");
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adaptation(tool: &str) -> Adaptation {
        Adaptation { tool: tool.into(), tool_use_id: format!("toolu_{tool}"), outcome: "repaired".into() }
    }

    #[test]
    fn the_set_survives_a_reload_and_the_file_is_private() {
        let dir = std::env::temp_dir().join(format!("toolmend-adaptive-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("new-folder/state.json");
        let tools = AdaptedTools::load(Some(&path)).unwrap();
        assert!(tools.names().is_empty(), "a missing file holds no tools");
        assert!(tools.adapt(adaptation("b")));
        assert!(tools.adapt(adaptation("a")));
        assert!(!tools.adapt(adaptation("a")), "adapted once");
        let reloaded = AdaptedTools::load(Some(&path)).unwrap();
        assert_eq!(reloaded.names(), BTreeSet::from(["a".to_string(), "b".to_string()]));
        assert_eq!(read_state(&path).unwrap()[0], adaptation("a"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(reloaded.remove(&["a".into(), "zz".into()]), ["a"]);
        assert_eq!(AdaptedTools::load(Some(&path)).unwrap().names(), BTreeSet::from(["b".to_string()]));
        std::fs::write(&path, "{\"adapted\": [}").unwrap();
        let error = AdaptedTools::load(Some(&path)).unwrap_err().to_string();
        assert!(error.contains("state.json") && error.contains("line 1 column"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
