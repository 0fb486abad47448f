//! `toolmend run -- COMMAND`: the sidecar on a free loopback port, and COMMAND run against it
//! with the variables Claude Code needs. COMMAND keeps the terminal; toolmend waits for it, lets
//! open streams drain, and hands back its exit code and a summary of what was repaired.

mod child;
pub mod env;
mod summary;

use crate::proxy::{Config, FileConfig, ProxyError, Server};
use std::ffi::{OsStr, OsString};
use std::net::{Ipv4Addr, SocketAddr};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error("no command given (toolmend run [OPTIONS] -- COMMAND [ARGS...])")]
    NoCommand,
    // The causes are sources, not part of the message: print the whole chain (`{:#}` of an
    // `anyhow::Error`) to see every one of them.
    #[error("the sidecar could not start, so {command} was not run")]
    Sidecar { command: String, source: ProxyError },
    #[error(
        "the upstream {upstream} is this sidecar itself ({listen}), so {command} was not run: every request \
         would come back to it. Is ANTHROPIC_BASE_URL left over from an earlier toolmend? Unset it or name the \
         real endpoint with --upstream"
    )]
    SelfLoop { command: String, upstream: String, listen: SocketAddr },
    #[error("installing the signal handlers, so {command} was not run")]
    Signals { command: String, source: std::io::Error },
    #[error("starting {command}")]
    Spawn { command: String, source: std::io::Error },
    #[error("waiting for {command}")]
    Wait { command: String, source: std::io::Error },
}

impl RunError {
    /// The shell's codes for a command that cannot be found (127) or run (126); 2 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            RunError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => 126,
            _ => 2,
        }
    }
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The command's exit code, or 128 + the signal that ended it.
    pub exit_code: u8,
    /// One line per tool: calls repaired, refused, invalid.
    pub summary: String,
}

/// The sidecar's settings for `run`: as `serve`'s, except that it listens on a free loopback
/// port unless told otherwise, and that without an upstream of its own it forwards to the
/// `ANTHROPIC_BASE_URL` the user had.
pub fn sidecar_config(mut file: FileConfig, base_url: Option<&OsStr>) -> Config {
    file.listen = file.listen.or(Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))));
    file.upstream = file.upstream.or_else(|| env::inherited_upstream(base_url));
    Config::from_file(file)
}

/// Starts the sidecar, runs `command` against it and waits for both to finish.
pub async fn run(config: Config, command: &[OsString]) -> Result<Finished, RunError> {
    let (program, args) = command.split_first().ok_or(RunError::NoCommand)?;
    let name = program.to_string_lossy().into_owned();
    let server = Server::bind(config).await.map_err(|source| RunError::Sidecar { command: name.clone(), source })?;
    let app = server.app();
    if env::is_the_sidecar(&app.config.upstream, server.local_addr()) {
        let (upstream, listen) = (app.config.upstream.clone(), server.local_addr());
        return Err(RunError::SelfLoop { command: name, upstream, listen });
    }
    let url = sidecar_url(server.local_addr());
    let signals = child::Signals::install().map_err(|source| RunError::Signals { command: name.clone(), source })?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).envs(env::child_environment(&url, |name| std::env::var_os(name)));
    child::die_with_parent(&mut command);
    let child = command.spawn().map_err(|source| RunError::Spawn { command: name.clone(), source })?;
    tracing::debug!(sidecar = %url, upstream = %app.config.upstream_redacted(), command = %name, "started");

    let shutdown = CancellationToken::new();
    let serving = server.run(shutdown.clone());
    let supervised = async {
        let status = signals.supervise(child).await;
        shutdown.cancel();
        status
    };
    let (served, status) = tokio::join!(serving, supervised);
    let status = status.map_err(|source| RunError::Wait { command: name, source })?;
    if let Err(error) = served {
        tracing::warn!(%error, "the sidecar stopped with an error");
    }
    Ok(Finished { exit_code: child::exit_code(status), summary: summary::render(&app.metrics) })
}

/// The URL the command is given: an unspecified bind address is reached over loopback.
fn sidecar_url(addr: SocketAddr) -> String {
    let host = if addr.ip().is_unspecified() { SocketAddr::from((Ipv4Addr::LOCALHOST, addr.port())) } else { addr };
    format!("http://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_base_url_is_the_upstream_unless_toolmend_names_one() {
        let base_url = Some(OsStr::new("http://127.0.0.1:9/gateway/anthropic"));
        let config = sidecar_config(FileConfig::default(), base_url);
        assert_eq!(config.upstream, "http://127.0.0.1:9/gateway/anthropic");
        assert_eq!(config.listen, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
        let named = FileConfig { upstream: Some("http://127.0.0.1:7".into()), ..FileConfig::default() };
        assert_eq!(sidecar_config(named, base_url).upstream, "http://127.0.0.1:7");
        assert_eq!(sidecar_config(FileConfig::default(), None).upstream, crate::proxy::DEFAULT_UPSTREAM);
    }

    #[test]
    fn an_unspecified_address_is_reached_over_loopback() {
        assert_eq!(sidecar_url("0.0.0.0:4000".parse().unwrap()), "http://127.0.0.1:4000");
        assert_eq!(sidecar_url("127.0.0.1:4000".parse().unwrap()), "http://127.0.0.1:4000");
    }
}
