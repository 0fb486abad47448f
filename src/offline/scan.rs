//! `toolmend scan`: how often tool input failed to parse, per tool, across Claude Code
//! transcripts, and how much of it toolmend would repair.

use super::record::unparsed_tool_use;
use super::transcript::{self, TwoPasses};
use super::{Repairer, ToolCatalog};
use crate::repair::Status;
use crate::schema::tool_list;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct ToolStats {
    pub calls: usize,
    pub unparsed: usize,
    pub repairable: usize,
    /// Refusals by reason code.
    pub refused: BTreeMap<String, usize>,
    /// Late-joining MCP calls (`why: "may_be_judged_repaired"`): raw already valid JSON.
    #[serde(skip_serializing_if = "is_zero")]
    pub late_joined: usize,
    /// Raw that parsed as JSON but broke the schema, with no lossless mend.
    #[serde(skip_serializing_if = "is_zero")]
    pub invalid: usize,
    /// Sessions with unparsed calls to this tool.
    pub sessions: BTreeSet<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A file or line that could not be read; the scan goes on without it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Problem {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct ScanReport {
    pub files: usize,
    pub problems: Vec<Problem>,
    pub tools: BTreeMap<String, ToolStats>,
}

impl ScanReport {
    /// Adds problems found outside the files (the folder walk), keeping the order by file.
    pub fn with_problems(mut self, problems: Vec<Problem>) -> Self {
        self.problems.extend(problems);
        self.problems.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        self
    }

    fn merge(&mut self, other: ScanReport) {
        self.files += other.files;
        self.problems.extend(other.problems);
        for (tool, stats) in other.tools {
            let into = self.tools.entry(tool).or_default();
            into.calls += stats.calls;
            into.unparsed += stats.unparsed;
            into.repairable += stats.repairable;
            into.late_joined += stats.late_joined;
            into.invalid += stats.invalid;
            for (code, n) in stats.refused {
                *into.refused.entry(code).or_default() += n;
            }
            into.sessions.extend(stats.sessions);
        }
    }
}

/// The transcripts found under a folder, and what could not be looked into.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TranscriptFiles {
    pub files: Vec<PathBuf>,
    pub problems: Vec<Problem>,
}

/// Every `.jsonl` file under `dir`, sorted. Symbolic links inside `dir` are not followed (a
/// loop would count files again and again, or never end); an unreadable subfolder is a
/// problem and the walk goes on. Only an unreadable `dir` itself is an error.
pub fn transcript_files(dir: &Path) -> std::io::Result<TranscriptFiles> {
    let mut found = TranscriptFiles::default();
    let mut pending = Vec::new();
    list_folder(dir, std::fs::read_dir(dir)?, &mut found, &mut pending);
    while let Some(folder) = pending.pop() {
        match std::fs::read_dir(&folder) {
            Ok(entries) => list_folder(&folder, entries, &mut found, &mut pending),
            Err(error) => found.problems.push(path_problem(&folder, format!("unreadable folder: {error}: skipped"))),
        }
    }
    found.files.sort();
    Ok(found)
}

/// One folder's entries: transcripts into `found`, subfolders onto `pending`.
fn list_folder(folder: &Path, entries: std::fs::ReadDir, found: &mut TranscriptFiles, pending: &mut Vec<PathBuf>) {
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                found.problems.push(path_problem(folder, format!("listing failed: {error}")));
                return;
            }
        };
        let path = entry.path();
        match entry.file_type() {
            Err(error) => found.problems.push(path_problem(&path, format!("unreadable: {error}"))),
            Ok(kind) if kind.is_symlink() => {
                found.problems.push(path_problem(&path, "symbolic link: not followed".into()))
            }
            Ok(kind) if kind.is_dir() => pending.push(path),
            Ok(_) if path.extension().is_some_and(|e| e == "jsonl") => found.files.push(path),
            Ok(_) => {}
        }
    }
}

fn path_problem(path: &Path, message: String) -> Problem {
    Problem { file: path.display().to_string(), line: None, message }
}

/// Scans `files` on `threads` threads; `progress(done, total)` is called after each file.
pub fn scan(
    files: &[PathBuf],
    repairer: &Repairer,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> ScanReport {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let total = Mutex::new(ScanReport::default());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut mine = ScanReport::default();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(index) else { break };
                    mine.merge(scan_file(file, repairer));
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, files.len());
                }
                total.lock().unwrap_or_else(|p| p.into_inner()).merge(mine);
            });
        }
    });
    let mut report = total.into_inner().unwrap_or_else(|p| p.into_inner());
    report.problems.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    report
}

fn scan_file(path: &Path, repairer: &Repairer) -> ScanReport {
    let mut report = ScanReport { files: 1, ..ScanReport::default() };
    let name = path.display().to_string();
    let problem = |line: Option<usize>, message: String| Problem { file: name.clone(), line, message };
    let bytes = match super::open::read_regular_file(path) {
        Ok(bytes) => bytes,
        Err(error) => {
            report.problems.push(problem(None, format!("unreadable: {error}")));
            return report;
        }
    };
    let fallback_session = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let passes = TwoPasses::new(&bytes, |line| {
        line["type"] == "api-request-shape" || (line["type"] == "assistant" && transcript::has_tool_use(line, false))
    });
    let index = &passes.index;
    let mut learned = ToolCatalog::default();
    let last = passes.line_count();
    for (number, bytes, read) in passes.lines() {
        let read = match read {
            None => continue,
            Some(Ok(read)) => read,
            Some(Err(_)) if transcript::is_blank(bytes) => continue,
            Some(Err(_)) if number == last => {
                report.problems.push(problem(Some(number), "half-written last line: skipped".into()));
                continue;
            }
            Some(Err(message)) => {
                report.problems.push(problem(Some(number), message));
                continue;
            }
        };
        let value = &read.value;
        if value["type"] == "api-request-shape" {
            learned.add_all(tool_list(value).unwrap_or_default(), Some(index.cache()));
            continue;
        }
        if value["type"] != "assistant" {
            continue;
        }
        let session = value["sessionId"].as_str().unwrap_or(&fallback_session).to_string();
        let blocks = value["message"]["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        let spans = read.lossy.then(|| transcript::input_spans(read.text)).flatten();
        for (position, block) in blocks.iter().enumerate().filter(|(_, b)| b["type"] == "tool_use") {
            let tool = block["name"].as_str().unwrap_or("?").to_string();
            let stats = report.tools.entry(tool).or_default();
            stats.calls += 1;
            let Some(mut call) = unparsed_tool_use(block) else { continue };
            call.stop_reason = index.stops.of_line(value);
            stats.unparsed += 1;
            stats.sessions.insert(session.clone());
            let span = spans.as_ref().and_then(|spans| spans.get(position).cloned().flatten());
            let lone_surrogate = read.lossy && span.is_none_or(|span| transcript::has_lone_surrogate(&read.text[span]));
            let tools = index.tools_of_line(value, &learned);
            let outcome = transcript::repair_call(repairer, &call, tools, Some(index), lone_surrogate);
            match outcome.status {
                Status::Repaired => stats.repairable += 1,
                Status::Valid => stats.late_joined += 1,
                Status::Invalid => stats.invalid += 1,
                _ => {
                    let code = outcome.reason.map(|r| r.code.as_str()).unwrap_or("unknown");
                    *stats.refused.entry(code.to_string()).or_default() += 1;
                }
            }
        }
    }
    report
}

/// The report as a table.
pub fn render_table(report: &ScanReport) -> String {
    let mut out = format!(
        "{:<32} {:>7} {:>9} {:>11} {:>9}  {}\n",
        "tool", "calls", "unparsed", "repairable", "sessions", "refused by reason"
    );
    for (tool, stats) in &report.tools {
        let refused: Vec<String> = stats.refused.iter().map(|(code, n)| format!("{code}: {n}")).collect();
        let mut refused = refused.join(", ");
        if stats.late_joined > 0 {
            refused.push_str(&format!(
                "{}late-joined (valid): {}",
                if refused.is_empty() { "" } else { "; " },
                stats.late_joined
            ));
        }
        if stats.invalid > 0 {
            refused.push_str(&format!(
                "{}invalid (breaks the schema): {}",
                if refused.is_empty() { "" } else { "; " },
                stats.invalid
            ));
        }
        out.push_str(&format!(
            "{:<32} {:>7} {:>9} {:>11} {:>9}  {}\n",
            tool,
            stats.calls,
            stats.unparsed,
            stats.repairable,
            stats.sessions.len(),
            if refused.is_empty() { "-".into() } else { refused }
        ));
    }
    out.push_str(&format!("\n{} transcript files", report.files));
    if !report.problems.is_empty() {
        out.push_str(&format!(", {} problems:", report.problems.len()));
        for problem in &report.problems {
            let at = problem.line.map(|l| format!(":{l}")).unwrap_or_default();
            out.push_str(&format!("\n  {}{at}: {}", problem.file, problem.message));
        }
    }
    out.push('\n');
    out
}
