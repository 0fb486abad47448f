//! Transcripts are opened only as regular files: a FIFO (or a device) at a transcript's path
//! would block the read, and the hook with it, for as long as nobody writes to it.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading if it is a regular file; anything else is an error that says so.
/// The open itself never waits (`O_NONBLOCK`), and the check is made on the opened file, so a
/// FIFO put in the file's place between a check and the open is refused too.
pub fn open_regular_file(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or folder): not read",
        ));
    }
    Ok(file)
}

/// The whole of a regular file.
pub fn read_regular_file(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular_file(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = std::env::temp_dir().join(format!("toolmend-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("transcript.jsonl");
        let _ = std::fs::remove_file(&fifo);
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo keeps no pointer.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let error = read_regular_file(&fifo).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{error}");
        assert!(read_regular_file(&dir).is_err());
        std::fs::write(dir.join("real.jsonl"), "{}\n").unwrap();
        assert_eq!(read_regular_file(&dir.join("real.jsonl")).unwrap(), b"{}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
