//! The sidecar's settings: the TOML file's keys, the resolved [`Config`] and its checks.
//! Layering the file under `TOOLMEND_*` variables and flags is [`super::settings`]' job.

use super::examples::ExamplesConfig;
use super::hooks::HookConfig;
use super::strict::StrictConfig;
use crate::telemetry::otel::OtelConfig;
use crate::telemetry::EVENT_KINDS;
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
    pub allowed_hosts: Option<Vec<String>>,
    pub keepalive_seconds: Option<u64>,
    pub drain_seconds: Option<u64>,
    pub header_read_timeout_seconds: Option<u64>,
    pub body_read_timeout_seconds: Option<u64>,
    pub max_connections: Option<usize>,
    pub workers: Option<usize>,
    pub max_request_bytes: Option<usize>,
    pub request_memory_bytes: Option<usize>,
    pub max_held_bytes: Option<usize>,
    pub max_event_bytes: Option<usize>,
    pub schema_cache_bytes: Option<usize>,
    pub events_capacity: Option<usize>,
    pub events_max_bytes: Option<usize>,
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
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
        toml::from_str(&text).map_err(|source| ConfigError::Parse { path: path.into(), source })
    }
}

/// A setting that cannot be used; the message names the key (or variable) at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("reading {}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}", path.display())]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("{key}: {message}")]
    Invalid { key: String, message: String },
    #[error(transparent)]
    Otel(#[from] crate::telemetry::otel::OtelError),
}

impl ConfigError {
    pub fn invalid(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid { key: key.into(), message: message.into() }
    }
}

/// Resolved settings.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub upstream: String,
    /// Binding anything but a loopback address needs this.
    pub allow_remote: bool,
    /// Host names accepted besides loopback names and the listen address (deliberate remote use).
    pub allowed_hosts: Vec<String>,
    /// Keep-alive pings while tool input is held this long without output.
    pub keepalive: Duration,
    /// How long open streams may run on after a shutdown signal.
    pub drain: Duration,
    /// A connection that has not sent a whole request head in this time (a partial request, or
    /// an idle keep-alive connection) is closed.
    pub header_read_timeout: Duration,
    /// A request body not wholly received this long after its head gets a 408 (or, when the
    /// upstream already answered, ends its upstream request): a slow-fed body must not hold its
    /// connection, its upstream request and their file descriptors for ever.
    pub body_read_timeout: Duration,
    /// Client connections open at once; connections above it are closed at once.
    pub max_connections: usize,
    /// Threads that serve connections, each with a runtime and an upstream client of its own.
    pub workers: usize,
    pub max_request_bytes: usize,
    /// Request bytes held at once over all requests: bodies read whole, and the `tools` text of
    /// streamed ones. A body read whole that would go over it gets a 503; a streamed one goes on
    /// with its `tools` unread (its stream passes through unrepaired).
    pub request_memory_bytes: usize,
    pub max_held_bytes: usize,
    /// `POST /events` bodies larger than this get a 413.
    pub max_event_bytes: usize,
    /// Bytes of schema text each schema cache keeps (catalogs by `tools` text, compiled schemas).
    pub schema_cache_bytes: usize,
    pub events_capacity: usize,
    /// The events store keeps at most this many bytes of serialized events.
    pub events_max_bytes: usize,
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
            allowed_hosts: file.allowed_hosts.unwrap_or_default(),
            keepalive: Duration::from_secs(file.keepalive_seconds.unwrap_or(5)),
            drain: Duration::from_secs(file.drain_seconds.unwrap_or(30)),
            header_read_timeout: Duration::from_secs(file.header_read_timeout_seconds.unwrap_or(30)),
            body_read_timeout: Duration::from_secs(file.body_read_timeout_seconds.unwrap_or(120)),
            max_connections: file.max_connections.unwrap_or_else(super::connections::default_max_connections),
            workers: file.workers.unwrap_or_else(super::workers::default_count),
            max_request_bytes: file.max_request_bytes.unwrap_or(32 << 20),
            request_memory_bytes: file.request_memory_bytes.unwrap_or(256 << 20),
            max_held_bytes: file.max_held_bytes.unwrap_or(4 << 20),
            max_event_bytes: file.max_event_bytes.unwrap_or(256 << 10),
            schema_cache_bytes: file.schema_cache_bytes.unwrap_or(crate::schema::SchemaCache::DEFAULT_MAX_BYTES),
            events_capacity: file.events_capacity.unwrap_or(1000),
            events_max_bytes: file.events_max_bytes.unwrap_or(16 << 20),
            redact_inputs: file.redact_inputs.unwrap_or(false),
            tool_label_limit: file.tool_label_limit.unwrap_or(100),
            capture: file.capture,
            strict: file.strict.unwrap_or_default(),
            hooks: file.hooks,
            otel: file.otel.unwrap_or_default(),
            examples: file.examples.unwrap_or_default(),
        }
    }

    /// The upstream URL as logs and errors show it: a password in it replaced by `***`.
    pub fn upstream_redacted(&self) -> String {
        redact_password(&self.upstream)
    }

    /// Refuses settings that would expose the sidecar or cannot work.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !self.listen.ip().is_loopback() && !self.allow_remote {
            return Err(ConfigError::invalid(
                "listen",
                format!("{} is not a loopback address; set allow_remote (--allow-remote) to bind it", self.listen),
            ));
        }
        let shown = self.upstream_redacted();
        let upstream = reqwest::Url::parse(&self.upstream)
            .map_err(|e| ConfigError::invalid("upstream", format!("'{shown}' is not a URL: {e}")))?;
        if !matches!(upstream.scheme(), "http" | "https") {
            return Err(ConfigError::invalid("upstream", format!("'{shown}' must be http or https")));
        }
        if self.header_read_timeout.is_zero() {
            return Err(ConfigError::invalid("header_read_timeout_seconds", "must be at least 1"));
        }
        if self.body_read_timeout.is_zero() {
            return Err(ConfigError::invalid("body_read_timeout_seconds", "must be at least 1"));
        }
        if self.max_connections == 0 {
            return Err(ConfigError::invalid("max_connections", "must be at least 1"));
        }
        if self.request_memory_bytes < self.max_request_bytes {
            return Err(ConfigError::invalid(
                "request_memory_bytes",
                format!(
                    "must be at least max_request_bytes ({}), or a body of that size could never be read",
                    self.max_request_bytes
                ),
            ));
        }
        if self.workers == 0 {
            return Err(ConfigError::invalid("workers", "must be at least 1"));
        }
        for (index, hook) in self.hooks.iter().enumerate() {
            if let Some(unknown) = hook.on.iter().find(|kind| !EVENT_KINDS.contains(&kind.as_str())) {
                return Err(ConfigError::invalid(
                    format!("hooks[{index}].on"),
                    format!("unknown event kind '{unknown}' (known: {})", EVENT_KINDS.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// `https://user:secret@host/p` → `https://user:***@host/p`; text that is not a URL loses
/// everything between `://` and its last `@`.
pub fn redact_password(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_string(),
        Err(_) => match (url.find("://"), url.rfind('@')) {
            (Some(start), Some(at)) if at > start => format!("{}***{}", &url[..start + 3], &url[at..]),
            _ => url.to_string(),
        },
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
        assert!(config.check().unwrap_err().to_string().contains("allow_remote"));
        config.allow_remote = true;
        assert!(config.check().is_ok());
        config.upstream = "ftp://x".into();
        assert!(config.check().unwrap_err().to_string().starts_with("upstream:"));
    }

    #[test]
    fn a_zero_body_read_timeout_or_connection_cap_is_an_error_naming_the_key() {
        let file: FileConfig = toml::from_str("body_read_timeout_seconds = 0\n").unwrap();
        assert!(Config::from_file(file).check().unwrap_err().to_string().starts_with("body_read_timeout_seconds:"));
        let file: FileConfig = toml::from_str("max_connections = 0\n").unwrap();
        assert!(Config::from_file(file).check().unwrap_err().to_string().starts_with("max_connections:"));
        let file: FileConfig = toml::from_str("max_connections = 3\nschema_cache_bytes = 5\n").unwrap();
        let config = Config::from_file(file);
        assert_eq!((config.max_connections, config.schema_cache_bytes), (3, 5));
        assert!(config.check().is_ok());
    }

    #[test]
    fn a_hook_on_an_unknown_event_kind_is_an_error_naming_the_key() {
        let file: FileConfig =
            toml::from_str("[[hooks]]\non = [\"repaired\", \"repiared\"]\ncommand = \"true\"\n").unwrap();
        let error = Config::from_file(file).check().unwrap_err().to_string();
        assert!(error.starts_with("hooks[0].on: unknown event kind 'repiared'"), "{error}");
        let file: FileConfig =
            toml::from_str("[[hooks]]\non = [\"refused\", \"strict_rejected\"]\ncommand = \"true\"\n").unwrap();
        assert!(Config::from_file(file).check().is_ok());
    }

    #[test]
    fn the_upstream_password_is_never_shown() {
        let config = Config { upstream: "https://team:s3cret@gw.example/prefix".into(), ..Config::default() };
        assert_eq!(config.upstream_redacted(), "https://team:***@gw.example/prefix");
        assert_eq!(redact_password("https://gw.example/p"), "https://gw.example/p");
        let broken = Config { upstream: "https://team:s3cret@gw example".into(), ..Config::default() };
        let error = broken.check().unwrap_err().to_string();
        assert!(!error.contains("s3cret"), "{error}");
    }

    #[test]
    fn io_and_toml_errors_keep_their_cause() {
        let missing = FileConfig::load(Path::new("/nonexistent/toolmend.toml")).unwrap_err();
        let cause = std::error::Error::source(&missing).unwrap();
        assert!(cause.downcast_ref::<std::io::Error>().is_some(), "{cause}");
        let dir = std::env::temp_dir().join(format!("toolmend-config-cause-{}.toml", std::process::id()));
        std::fs::write(&dir, "listen = 5\n").unwrap();
        let parse = FileConfig::load(&dir).unwrap_err();
        let _ = std::fs::remove_file(&dir);
        assert!(std::error::Error::source(&parse).unwrap().to_string().contains("listen"));
    }
}
