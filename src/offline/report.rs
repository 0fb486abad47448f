//! Where `toolmend hook post-tool-batch` reports its findings: a running sidecar (a POST to
//! `/events`) and/or a JSON Lines file. One runtime, one client and one open file for the
//! whole hook run; the POST gives up after a few seconds, since a hook must never hang.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long connecting to the sidecar may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one whole report (connect, send, answer) may take.
pub const REPORT_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    #[error("opening {}", path.display())]
    OpenFile { path: PathBuf, source: std::io::Error },
    #[error("writing {}", path.display())]
    WriteFile { path: PathBuf, source: std::io::Error },
    #[error("starting the async runtime")]
    Runtime(#[source] std::io::Error),
    #[error("building the HTTP client")]
    Client(#[source] reqwest::Error),
    #[error("reporting to {url}")]
    Post { url: String, source: reqwest::Error },
}

pub struct Reporter {
    file: Option<(PathBuf, std::fs::File)>,
    sidecar: Option<Sidecar>,
}

struct Sidecar {
    url: String,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Reporter {
    /// `sidecar`: the sidecar's base URL; `file`: appended to, created with mode 0600.
    pub fn new(sidecar: Option<&str>, file: Option<&Path>) -> Result<Self, ReportError> {
        let file = match file {
            Some(path) => Some((path.to_path_buf(), open_private(path)?)),
            None => None,
        };
        let sidecar = match sidecar {
            Some(base) => {
                crate::init_tls();
                let client = reqwest::Client::builder()
                    .connect_timeout(CONNECT_TIMEOUT)
                    .timeout(REPORT_TIMEOUT)
                    .build()
                    .map_err(ReportError::Client)?;
                let runtime =
                    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ReportError::Runtime)?;
                Some(Sidecar { url: format!("{}/events", base.trim_end_matches('/')), client, runtime })
            }
            None => None,
        };
        Ok(Self { file, sidecar })
    }

    /// Reports one event everywhere configured; the file is written even if the POST fails.
    pub fn report(&mut self, event: &Value) -> Result<(), ReportError> {
        if let Some((path, file)) = &mut self.file {
            writeln!(file, "{event}").map_err(|source| ReportError::WriteFile { path: path.clone(), source })?;
        }
        if let Some(sidecar) = &self.sidecar {
            let post = async {
                sidecar.client.post(&sidecar.url).json(event).send().await?.error_for_status()?;
                Ok(())
            };
            sidecar.runtime.block_on(post).map_err(|source: reqwest::Error| ReportError::Post {
                url: sidecar.url.clone(),
                source: source.without_url(),
            })?;
        }
        Ok(())
    }
}

/// Opens `path` for appending; a new file gets mode 0600 (it holds raw model output).
fn open_private(path: &Path) -> Result<std::fs::File, ReportError> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|source| ReportError::OpenFile { path: path.to_path_buf(), source })
}
