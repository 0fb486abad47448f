//! `toolmend hook install` / `uninstall`: toolmend's PostToolBatch hook merged into, or taken
//! out of, a Claude Code settings file. Every other key and hook stays; the previous file is
//! kept beside it; a file that is not valid settings JSON is left exactly as it was.

pub mod merge;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

pub use merge::SettingsError;

/// Which settings file: Claude Code's user, project (shared) or local (yours only) settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    User,
    Project,
    Local,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    #[error("{}: {error}; the file was left as it was", path.display())]
    Settings { path: PathBuf, error: SettingsError },
    #[error("{0}")]
    Environment(&'static str),
    #[error("{what} {}: {error}", path.display())]
    Io { what: &'static str, path: PathBuf, error: std::io::Error },
}

impl Scope {
    /// From the `--user` / `--project` / `--local` flags (at most one is set); user by default.
    pub fn from_flags(flags: &crate::cli::SettingsScope) -> Self {
        match (flags.project, flags.local) {
            (true, _) => Scope::Project,
            (_, true) => Scope::Local,
            _ => Scope::User,
        }
    }
}

/// What happened to the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// Nothing to do: the hook was already (or, for uninstall, never) there.
    Unchanged,
    /// Written; `backup` holds the previous content, if there was a file.
    Written { backup: Option<PathBuf> },
}

/// The outcome of `install_here` / `uninstall_here`, said in one sentence by `Display`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub path: PathBuf,
    /// The hook command installed; `None` for uninstall.
    pub command: Option<String>,
    pub change: Change,
}

impl std::fmt::Display for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match (&self.change, &self.command) {
            (Change::Unchanged, Some(_)) => write!(f, "the hook is already installed in {path}; nothing changed")?,
            (Change::Unchanged, None) => write!(f, "no toolmend hook in {path}; nothing changed")?,
            (Change::Written { .. }, Some(command)) => write!(f, "added the PostToolBatch hook `{command}` to {path}")?,
            (Change::Written { .. }, None) => write!(f, "removed the PostToolBatch hook from {path}")?,
        }
        match &self.change {
            Change::Written { backup: Some(backup) } => write!(f, " (previous file: {})", backup.display()),
            _ => Ok(()),
        }
    }
}

/// Installs the hook that runs this binary into the settings file of `scope`, for this user
/// (`HOME`, `CLAUDE_CONFIG_DIR`) and this folder.
pub fn install_here(scope: Scope, report: Option<&str>) -> Result<Done, InstallError> {
    let path = settings_path_here(scope)?;
    let exe = std::env::current_exe().map_err(|error| InstallError::Io {
        what: "finding",
        path: "the toolmend binary".into(),
        error,
    })?;
    let command = hook_command(&program_name(&exe, std::env::var_os("PATH").as_deref()), report);
    let change = install(&path, &command)?;
    Ok(Done { path, command: Some(command), change })
}

/// Removes toolmend's hook from the settings file of `scope`, for this user and this folder.
pub fn uninstall_here(scope: Scope) -> Result<Done, InstallError> {
    let path = settings_path_here(scope)?;
    let change = uninstall(&path)?;
    Ok(Done { path, command: None, change })
}

fn settings_path_here(scope: Scope) -> Result<PathBuf, InstallError> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .ok_or(InstallError::Environment("HOME is not set"))?;
    let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from);
    let project = std::env::current_dir().map_err(|error| InstallError::Io {
        what: "finding",
        path: "the current folder".into(),
        error,
    })?;
    Ok(settings_path(scope, &home, config_dir.as_deref(), &project))
}

/// Where the settings file of `scope` is: user settings under `CLAUDE_CONFIG_DIR` when that is
/// set (as Claude Code does), else `~/.claude`; the others under `project`.
pub fn settings_path(scope: Scope, home: &Path, config_dir: Option<&Path>, project: &Path) -> PathBuf {
    match scope {
        Scope::User => config_dir.map_or_else(|| home.join(".claude"), Path::to_path_buf).join("settings.json"),
        Scope::Project => project.join(".claude/settings.json"),
        Scope::Local => project.join(".claude/settings.local.json"),
    }
}

/// How the hook names toolmend: `toolmend` when that is what `PATH` finds for `exe`, else
/// the full path of `exe` (a build that is not installed).
pub fn program_name(exe: &Path, path_var: Option<&OsStr>) -> String {
    let on_path = path_var
        .into_iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("toolmend"))
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.canonicalize().ok());
    if on_path.is_some() && on_path == exe.canonicalize().ok() {
        "toolmend".into()
    } else {
        shell_quote(&exe.display().to_string())
    }
}

/// The hook command line: `program hook post-tool-batch [--report URL]`.
pub fn hook_command(program: &str, report: Option<&str>) -> String {
    let mut command = format!("{program} hook post-tool-batch");
    if let Some(url) = report {
        command.push_str(" --report ");
        command.push_str(&shell_quote(url));
    }
    command
}

/// Quotes a word for `sh` unless it only holds characters that need none.
fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-:@%+=,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Adds `command` as the PostToolBatch hook of the settings file at `path` (created if missing).
pub fn install(path: &Path, command: &str) -> Result<Change, InstallError> {
    let old = read(path)?;
    let new = merge::with_hook(old.as_deref(), command)
        .map_err(|error| InstallError::Settings { path: path.into(), error })?;
    write(path, old.as_deref(), new)
}

/// Removes toolmend's PostToolBatch hooks from the settings file at `path`.
pub fn uninstall(path: &Path) -> Result<Change, InstallError> {
    let Some(old) = read(path)? else { return Ok(Change::Unchanged) };
    let new = merge::without_hook(&old).map_err(|error| InstallError::Settings { path: path.into(), error })?;
    write(path, Some(&old), new)
}

fn read(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(InstallError::Io { what: "reading", path: path.into(), error }),
    }
}

/// Backs up the old file, then replaces it through a rename so that no reader sees half a file.
fn write(path: &Path, old: Option<&str>, new: Option<String>) -> Result<Change, InstallError> {
    let Some(new) = new else { return Ok(Change::Unchanged) };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io("creating", parent))?;
    }
    let backup = match old {
        Some(old) => Some(backup(path, old)?),
        None => None,
    };
    let temporary = sibling(path, &format!("toolmend-{}.tmp", std::process::id()));
    std::fs::write(&temporary, new).map_err(io("writing", &temporary))?;
    if let Ok(metadata) = std::fs::metadata(path) {
        std::fs::set_permissions(&temporary, metadata.permissions()).map_err(io("writing", &temporary))?;
    }
    if let Err(error) = std::fs::rename(&temporary, path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(InstallError::Io { what: "replacing", path: path.into(), error });
    }
    Ok(Change::Written { backup })
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |error| InstallError::Io { what, path, error }
}

/// `settings.json.bak-<unix seconds>` (then `-2`, `-3`… within one second); never overwrites.
fn backup(path: &Path, old: &str) -> Result<PathBuf, InstallError> {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    let mut attempt = 1;
    loop {
        let suffix = if attempt == 1 { format!("bak-{seconds}") } else { format!("bak-{seconds}-{attempt}") };
        let candidate = sibling(path, &suffix);
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate);
        match file {
            Ok(mut file) => {
                return std::io::Write::write_all(&mut file, old.as_bytes())
                    .map(|()| candidate.clone())
                    .map_err(|error| InstallError::Io { what: "writing the backup", path: candidate, error });
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => attempt += 1,
            Err(error) => return Err(InstallError::Io { what: "writing the backup", path: candidate, error }),
        }
    }
}

/// `path` with `.suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_paths_per_scope() {
        let (home, project) = (Path::new("/home/me"), Path::new("/src/app"));
        assert_eq!(settings_path(Scope::User, home, None, project), Path::new("/home/me/.claude/settings.json"));
        assert_eq!(settings_path(Scope::User, home, Some(Path::new("/cfg")), project), Path::new("/cfg/settings.json"));
        assert_eq!(settings_path(Scope::Project, home, None, project), Path::new("/src/app/.claude/settings.json"));
        assert_eq!(settings_path(Scope::Local, home, None, project), Path::new("/src/app/.claude/settings.local.json"));
    }

    #[test]
    fn the_command_quotes_what_the_shell_would_split() {
        assert_eq!(hook_command("toolmend", None), "toolmend hook post-tool-batch");
        assert_eq!(
            hook_command(&shell_quote("/opt/my tools/toolmend"), Some("http://127.0.0.1:8787")),
            "'/opt/my tools/toolmend' hook post-tool-batch --report http://127.0.0.1:8787"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[cfg(unix)]
    #[test]
    fn the_binary_is_named_toolmend_only_when_path_finds_that_same_file() {
        let exe = std::env::current_exe().unwrap();
        let full = shell_quote(&exe.display().to_string());
        let dir = std::env::temp_dir().join(format!("toolmend-program-name-{}", std::process::id()));
        let (same, other) = (dir.join("same"), dir.join("other"));
        std::fs::create_dir_all(&same).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&exe, same.join("toolmend")).unwrap();
        std::fs::write(other.join("toolmend"), "#!/bin/sh\n").unwrap();
        let path = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        assert_eq!(program_name(&exe, Some(&path(&[&same, &other]))), "toolmend");
        assert_eq!(program_name(&exe, Some(&path(&[&other, &same]))), full);
        assert_eq!(program_name(&exe, None), full);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
