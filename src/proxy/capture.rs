//! The capture file: one JSON line per call that was not valid, readable by `toolmend repair`.

use serde_json::Value;
use std::fs::File;
use std::io::{Error, ErrorKind, Write};
use std::path::Path;
use std::sync::Mutex;

pub struct Capture {
    file: Mutex<File>,
}

impl Capture {
    /// Creates the file with mode 0600 (it holds raw model output), or appends to an existing
    /// regular file the user owns. A symbolic link at the path is refused, not followed: in a
    /// directory others can write, a planted link would have the sidecar append model output
    /// to (and narrow the mode of) a file of the link's choosing. A file toolmend did not
    /// create keeps its mode.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = match options(true).open(path) {
            Ok(created) => created,
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {
                let existing = options(false).open(path).map_err(explain)?;
                check_existing(&existing)?;
                existing
            }
            Err(error) => return Err(explain(error)),
        };
        Ok(Self { file: Mutex::new(file) })
    }

    pub(crate) fn write(&self, line: &Value) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(error) = writeln!(file, "{line}") {
            tracing::warn!(%error, "writing the capture file failed");
        }
    }
}

/// Append-only, never through a symbolic link; `create` makes a new file or fails.
fn options(create: bool) -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create_new(create);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO planted at the path fails instead of waiting for a reader.
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options
}

/// A link refused by `O_NOFOLLOW` reports "too many levels of symbolic links": say what it is.
fn explain(error: Error) -> Error {
    #[cfg(unix)]
    if error.raw_os_error() == Some(libc::ELOOP) {
        return Error::new(ErrorKind::InvalidInput, "it is a symbolic link; the capture file must be a regular file");
    }
    error
}

/// An existing capture file must be a regular file the user owns.
fn check_existing(file: &File) -> std::io::Result<()> {
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "it is not a regular file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        // SAFETY: geteuid has no preconditions and cannot fail.
        let user = unsafe { libc::geteuid() };
        if metadata.uid() != user {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                format!("it is owned by uid {}, not by this user (uid {user})", metadata.uid()),
            ));
        }
        if metadata.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                mode = format!("{:o}", metadata.permissions().mode() & 0o777),
                "the capture file is readable by others; it holds raw model output (chmod 600 it)"
            );
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("toolmend-capture-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_new_file_is_0600_and_an_existing_one_is_appended_to_with_its_mode_kept() {
        let dir = scratch("mode");
        let new = dir.join("new.jsonl");
        Capture::open(&new).unwrap().write(&serde_json::json!({"id": "x"}));
        assert_eq!(std::fs::metadata(&new).unwrap().permissions().mode() & 0o777, 0o600);
        let existing = dir.join("existing.jsonl");
        std::fs::write(&existing, "{\"id\":\"old\"}\n").unwrap();
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o644)).unwrap();
        Capture::open(&existing).unwrap().write(&serde_json::json!({"id": "x"}));
        let mode = std::fs::metadata(&existing).unwrap().permissions().mode() & 0o777;
        let text = std::fs::read_to_string(&existing).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(mode, 0o644, "a file toolmend did not create is not chmodded");
        assert_eq!(text, "{\"id\":\"old\"}\n{\"id\":\"x\"}\n");
    }

    #[test]
    fn a_symbolic_link_or_a_directory_at_the_path_is_refused_and_the_target_untouched() {
        let dir = scratch("link");
        let victim = dir.join("victim_rc");
        std::fs::write(&victim, "export A=1\n").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = dir.join("calls.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let error = Capture::open(&link).err().expect("a link is refused").to_string();
        let dangling = dir.join("dangling.jsonl");
        std::os::unix::fs::symlink(dir.join("absent"), &dangling).unwrap();
        let dangling_error = Capture::open(&dangling).err().map(|e| e.to_string());
        let not_file = Capture::open(&dir).err().map(|e| e.to_string());
        let (text, mode) = (std::fs::read_to_string(&victim).unwrap(), std::fs::metadata(&victim).unwrap());
        let created = dir.join("absent").exists();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(error.contains("symbolic link"), "{error}");
        assert!(dangling_error.unwrap().contains("symbolic link"));
        assert!(!created, "a dangling link does not create its target");
        assert!(not_file.is_some(), "a directory is refused");
        assert_eq!(text, "export A=1\n");
        assert_eq!(mode.permissions().mode() & 0o777, 0o644);
    }
}
