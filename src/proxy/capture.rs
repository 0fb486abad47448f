//! The capture file: one JSON line per call that was not valid, readable by `toolmend repair`.

use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

pub struct Capture {
    file: Mutex<File>,
}

impl Capture {
    /// Opens (appending) or creates the file with mode 0600: it holds raw model output. An
    /// existing file with a wider mode is narrowed to 0600.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if file.metadata()?.permissions().mode() & 0o077 != 0 {
                file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            }
        }
        Ok(Self { file: Mutex::new(file) })
    }

    pub(crate) fn write(&self, line: &Value) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = writeln!(file, "{line}") {
            tracing::warn!(%error, "writing the capture file failed");
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_existing_wider_file_is_narrowed_to_0600() {
        let path = std::env::temp_dir().join(format!("toolmend-capture-mode-{}.jsonl", std::process::id()));
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let capture = Capture::open(&path).unwrap();
        capture.write(&serde_json::json!({"id": "x"}));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        let _ = std::fs::remove_file(&path);
        assert_eq!(mode, 0o600);
    }
}
