//! The sidecar's settings: a TOML file, overridden by `TOOLMEND_*` variables and flags.

use super::examples::ExamplesConfig;
use super::hooks::HookConfig;
use super::strict::StrictConfig;
use crate::telemetry::otel::OtelConfig;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
pub const DEFAULT_UPSTREAM: &str = "https://api.anthropic.com";

/// The config file, every key optional. Unknown keys are errors.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<SocketAddr>,
    pub upstream: Option<String>,
    pub allow_remote: Option<bool>,
    pub keepalive_seconds: Option<u64>,
    pub drain_seconds: Option<u64>,
    pub max_request_bytes: Option<usize>,
    pub max_held_bytes: Option<usize>,
    pub events_capacity: Option<usize>,
    pub redact_inputs: Option<bool>,
    pub tool_label_limit: Option<usize>,
    pub capture: Option<PathBuf>,
    pub strict: Option<StrictConfig>,
    #[serde(default)]
    pub hooks: Vec<HookConfig>,
    pub otel: Option<OtelConfig>,
    pub examples: Option<ExamplesConfig>,
}

impl FileConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| ConfigError(format!("reading {}: {e}", path.display())))?;
        toml::from_str(&text).map_err(|e| ConfigError(format!("{}: {e}", path.display())))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Resolved settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub upstream: String,
    /// Binding anything but a loopback address needs this.
    pub allow_remote: bool,
    /// Keep-alive pings while tool input is held this long without output.
    pub keepalive: Duration,
    /// How long open streams may run on after a shutdown signal.
    pub drain: Duration,
    pub max_request_bytes: usize,
    pub max_held_bytes: usize,
    pub events_capacity: usize,
    pub redact_inputs: bool,
    pub tool_label_limit: usize,
    pub capture: Option<PathBuf>,
    pub strict: StrictConfig,
    pub hooks: Vec<HookConfig>,
    /// OpenTelemetry export; off unless it names an endpoint.
    pub otel: OtelConfig,
    pub examples: ExamplesConfig,
}

impl Default for Config {
    fn default() -> Self {
        Self::from_file(FileConfig::default())
    }
}

impl Config {
    pub fn from_file(file: FileConfig) -> Self {
        Self {
            listen: file.listen.unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("valid default")),
            upstream: file.upstream.unwrap_or_else(|| DEFAULT_UPSTREAM.into()),
            allow_remote: file.allow_remote.unwrap_or(false),
            keepalive: Duration::from_secs(file.keepalive_seconds.unwrap_or(5)),
            drain: Duration::from_secs(file.drain_seconds.unwrap_or(30)),
            max_request_bytes: file.max_request_bytes.unwrap_or(32 << 20),
            max_held_bytes: file.max_held_bytes.unwrap_or(4 << 20),
            events_capacity: file.events_capacity.unwrap_or(1000),
            redact_inputs: file.redact_inputs.unwrap_or(false),
            tool_label_limit: file.tool_label_limit.unwrap_or(100),
            capture: file.capture,
            strict: file.strict.unwrap_or_default(),
            hooks: file.hooks,
            otel: file.otel.unwrap_or_default(),
            examples: file.examples.unwrap_or_default(),
        }
    }

    /// Refuses settings that would expose the sidecar or cannot work.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !self.listen.ip().is_loopback() && !self.allow_remote {
            return Err(ConfigError(format!(
                "listen: {} is not a loopback address; set allow_remote (--allow-remote) to bind it",
                self.listen
            )));
        }
        let upstream = reqwest::Url::parse(&self.upstream)
            .map_err(|e| ConfigError(format!("upstream: '{}' is not a URL: {e}", self.upstream)))?;
        if !matches!(upstream.scheme(), "http" | "https") {
            return Err(ConfigError(format!("upstream: '{}' must be http or https", self.upstream)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_is_an_error_that_names_the_key() {
        let error = toml::from_str::<FileConfig>("keepalive_seconds = \"soon\"").unwrap_err().to_string();
        assert!(error.contains("keepalive_seconds"), "{error}");
        let error = toml::from_str::<FileConfig>("listne = \"127.0.0.1:1\"").unwrap_err().to_string();
        assert!(error.contains("listne"), "{error}");
    }

    #[test]
    fn non_loopback_binds_need_allow_remote() {
        let mut config = Config { listen: "0.0.0.0:8787".parse().unwrap(), ..Config::default() };
        assert!(config.check().unwrap_err().0.contains("allow_remote"));
        config.allow_remote = true;
        assert!(config.check().is_ok());
        config.upstream = "ftp://x".into();
        assert!(config.check().unwrap_err().0.starts_with("upstream:"));
    }
}
