//! `toolmend fix-transcript IN OUT`: a copy of a transcript where each repairable
//! `__unparsedToolInput` holds the repaired input instead; every other byte as it was.

use super::record::unparsed_tool_use;
use super::transcript::{self, ReadLine, TranscriptIndex, TwoPasses};
use super::{Repairer, ToolCatalog};
use crate::repair::Status;
use crate::schema::tool_list;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FixSummary {
    pub repaired: Vec<String>,
    pub refused: Vec<(String, String)>,
    pub lines_changed: usize,
    /// Inputs whose place in their line could not be read (left unchanged).
    pub not_located: Vec<(usize, String)>,
    /// Lines that could not be read (not UTF-8, not JSON), kept as they were: number, why.
    pub bad_lines: Vec<(usize, String)>,
}

/// Writes the fixed copy to `output`, which must not exist yet, with the mode of `input`:
/// the copy is never readable by more users than the transcript (the umask may narrow it).
/// The bytes go to a temporary file beside `output` first, which becomes `output` only once
/// all of it is written: a failed write leaves nothing behind, and the next try can run.
pub fn write_copy(output: &Path, input: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = output.file_name().ok_or_else(|| std::io::Error::other("the output names no file"))?;
    let mut temporary_name = std::ffi::OsString::from(".");
    temporary_name.push(name);
    temporary_name.push(format!(".toolmend-{}.tmp", std::process::id()));
    let temporary = output.with_file_name(temporary_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(std::fs::metadata(input)?.permissions().mode() & 0o777);
    }
    #[cfg(not(unix))]
    let _ = input;
    let mut file = options.open(&temporary)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    // A hard link never replaces a file that appeared at `output` meanwhile (a rename would);
    // where the file system has no hard links, a rename to a name still free.
    let placed = written.and_then(|()| match std::fs::hard_link(&temporary, output) {
        Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists && output.symlink_metadata().is_err() => {
            std::fs::rename(&temporary, output)
        }
        linked => linked,
    });
    let _ = std::fs::remove_file(&temporary);
    placed
}

/// Rewrites `bytes` (a whole transcript). Lines are split on `\n` and rejoined with it, so line
/// endings and a missing final newline stay as they were; a line that cannot be read (not
/// UTF-8, not JSON) is reported and kept as it was. Only the input of each repaired block
/// changes, found by its place in the line's structure, never by searching for its text.
pub fn fix_transcript(bytes: &[u8], repairer: &Repairer) -> (Vec<u8>, FixSummary) {
    let mut summary = FixSummary::default();
    let passes = TwoPasses::new(bytes, |line| {
        let kind = line["type"].as_str().unwrap_or_default();
        kind == "api-request-shape"
            || (matches!(kind, "assistant" | "api-request-blob") && transcript::has_tool_use(line, true))
    });
    let index = &passes.index;
    let mut so_far = ToolCatalog::default();
    let mut out = Vec::with_capacity(bytes.len());
    for (number, bytes, read) in passes.lines() {
        if number > 1 {
            out.push(b'\n');
        }
        let read = match read {
            None => {
                out.extend_from_slice(bytes);
                continue;
            }
            Some(Ok(read)) => read,
            Some(Err(problem)) => {
                if !transcript::is_blank(bytes) {
                    summary.bad_lines.push((number, problem));
                }
                out.extend_from_slice(bytes);
                continue;
            }
        };
        if read.value["type"] == "api-request-shape" {
            so_far.add_all(tool_list(&read.value).unwrap_or_default(), Some(index.cache()));
        }
        let edits = fix_line(&read, number, repairer, index, &so_far, &mut summary);
        if edits.is_empty() {
            out.extend_from_slice(bytes);
            continue;
        }
        summary.lines_changed += 1;
        let mut copied = 0;
        for (span, input) in edits {
            out.extend_from_slice(&bytes[copied..read.offset + span.start]);
            out.extend_from_slice(input.as_bytes());
            copied = read.offset + span.end;
        }
        out.extend_from_slice(&bytes[copied..]);
    }
    (out, summary)
}

/// The repaired inputs of one line, each with the bytes of the input it replaces (in order).
fn fix_line(
    read: &ReadLine<'_>,
    number: usize,
    repairer: &Repairer,
    index: &TranscriptIndex,
    so_far: &ToolCatalog,
    summary: &mut FixSummary,
) -> Vec<(Range<usize>, String)> {
    let value = &read.value;
    let is_assistant = value["type"] == "assistant";
    if !is_assistant && value["type"] != "api-request-blob" {
        return Vec::new();
    }
    let blocks = value["message"]["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let spans = transcript::input_spans(read.text).filter(|spans| spans.len() == blocks.len());
    let mut edits = Vec::new();
    for (position, block) in blocks.iter().enumerate() {
        let Some(mut call) = unparsed_tool_use(block) else { continue };
        let id = call.id.clone().unwrap_or_default();
        // A request's copy of the message carries no stop reason: the assistant line's counts.
        let tools = match is_assistant {
            true => {
                call.stop_reason = index.stops.of_line(value);
                index.tools_of_line(value, so_far)
            }
            false => {
                call.stop_reason = index.stops.of_tool_use(&id);
                index.tools_of_tool_use(&id, so_far)
            }
        };
        let span = spans.as_ref().and_then(|spans| spans[position].clone());
        let lone_surrogate =
            read.lossy && span.as_ref().is_none_or(|span| transcript::has_lone_surrogate(&read.text[span.clone()]));
        let outcome = transcript::repair_call(repairer, &call, tools, Some(index), lone_surrogate);
        let (Status::Repaired, Some(input)) = (outcome.status, &outcome.input) else {
            if is_assistant {
                let reason = outcome.reason.map(|r| r.to_string()).unwrap_or_else(|| "valid already".into());
                summary.refused.push((id, reason));
            }
            continue;
        };
        let Some(span) = span else {
            summary.not_located.push((number, id));
            continue;
        };
        edits.push((span, input.to_string()));
        if is_assistant {
            summary.repaired.push(id);
        }
    }
    edits
}
