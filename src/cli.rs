//! Command-line arguments, and nothing else: the binary turns them into library calls.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "toolmend", version, about = "Repairs Claude tool calls whose input failed to parse")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the sidecar: a Messages API proxy that repairs tool input in the stream.
    Serve(ServeArgs),
    /// Run a command with the sidecar in front of it: `toolmend run [OPTIONS] -- claude ...`.
    Run(RunArgs),
    /// Show the main job on an embedded fake API: a malformed call repaired in the stream.
    Demo,
    /// Repair recorded tool calls (JSON Lines records, transcripts, captures), or one raw input.
    Repair(RepairArgs),
    /// Show which tools `serve` could make strict, their normalized schemas, or why not, and
    /// the tools adaptive strict has chosen.
    StrictCheck(StrictCheckArgs),
    /// Print an `[examples]` config block from recorded inputs (a capture file's repairs).
    Examples(ExamplesArgs),
    /// Count unparsed tool calls per tool across Claude Code transcripts.
    Scan(ScanArgs),
    /// Write a copy of a transcript in which repairable calls hold their repaired input.
    FixTranscript(FixTranscriptArgs),
    /// Commands for Claude Code hooks.
    #[command(subcommand)]
    Hook(HookCommand),
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Folder of transcripts [default: ~/.claude/projects].
    pub dir: Option<PathBuf>,
    /// One JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Threads reading files [default: the machine's cores].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Schemas for tools the transcripts do not record (see `repair --tools`).
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FixTranscriptArgs {
    /// The transcript to read (never written).
    pub input: PathBuf,
    /// Where to write the copy (must not exist yet).
    pub output: PathBuf,
    /// Schemas for tools the transcript does not record.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// The PostToolBatch hook: reads the hook JSON on stdin, repairs unparsed calls and prints
    /// `additionalContext` with the corrected input. Never fails the hook.
    PostToolBatch(PostToolBatchArgs),
    /// Add the PostToolBatch hook to a Claude Code settings file (other keys and hooks kept, the
    /// previous file backed up beside it).
    Install(HookInstallArgs),
    /// Remove toolmend's PostToolBatch hook from a Claude Code settings file.
    Uninstall(SettingsScope),
}

/// Which Claude Code settings file.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub struct SettingsScope {
    /// ~/.claude/settings.json, or settings.json in $CLAUDE_CONFIG_DIR (the default).
    #[arg(long)]
    pub user: bool,
    /// .claude/settings.json in this folder (shared with the project).
    #[arg(long)]
    pub project: bool,
    /// .claude/settings.local.json in this folder (yours only).
    #[arg(long)]
    pub local: bool,
}

#[derive(Debug, Args)]
pub struct HookInstallArgs {
    #[command(flatten)]
    pub scope: SettingsScope,
    /// A running sidecar the hook reports each call to (passed on to `hook post-tool-batch`).
    #[arg(long, value_name = "URL")]
    pub report: Option<String>,
}

#[derive(Debug, Args)]
pub struct PostToolBatchArgs {
    /// A running sidecar to report each call to (its URL; events are POSTed to /events).
    #[arg(long, value_name = "URL")]
    pub report: Option<String>,
    /// A JSON Lines file to append each call's event to.
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// Schemas for tools the transcript does not record.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StrictCheckArgs {
    /// An Anthropic `tools` array, an MCP `tools/list` result, a Claude Code transcript, or
    /// JSON Lines records with `tool` and `schema`.
    #[arg(long, value_name = "FILE", required_unless_present = "state")]
    pub tools: Option<PathBuf>,
    /// Adaptive strict's state file (`[strict] state_file`): list the tools it has chosen.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// One JSON array instead of text (with --state: an object with `tools` and `adapted`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExamplesArgs {
    /// JSON Lines of `{tool, input}`: the sidecar's capture file (its repaired inputs) or
    /// lines written by hand.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
}

/// Flags win over `TOOLMEND_*` variables, which win over the config file (resolved in
/// `toolmend::proxy::settings`, not by clap, so that a variable can say `false` too).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8787; for `run`, a free loopback port]
    /// [env: TOOLMEND_LISTEN].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The Messages API to forward to [default: https://api.anthropic.com; for `run`, the
    /// ANTHROPIC_BASE_URL the command would have used, if set] [env: TOOLMEND_UPSTREAM].
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// A TOML config file (see the README for its keys) [env: TOOLMEND_CONFIG].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Allow binding an address other than loopback [env: TOOLMEND_ALLOW_REMOTE].
    #[arg(long)]
    pub allow_remote: bool,
    /// Append every call that was not valid to this JSON Lines file (mode 0600) [env: TOOLMEND_CAPTURE].
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
    /// Leave raw and repaired inputs out of /events, the live page and OTLP log records
    /// [env: TOOLMEND_REDACT_INPUTS].
    #[arg(long)]
    pub redact_inputs: bool,
}

#[derive(Debug, Args)]
pub struct RepairArgs {
    /// JSON Lines files to read; '-' or none reads standard input.
    pub files: Vec<PathBuf>,
    /// Repair one raw tool input read from standard input against this JSON Schema file and
    /// print the JSON (exit 0), or the reason on stderr (exit 1).
    #[arg(long, value_name = "FILE", conflicts_with = "files")]
    pub schema: Option<PathBuf>,
    /// Schemas for calls that carry none: an Anthropic `tools` array or an MCP `tools/list` result.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// With --schema: the message's stop reason (`max_tokens` refuses).
    #[arg(long, value_name = "REASON", requires = "schema")]
    pub stop_reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Print no summary when the command ends.
    #[arg(long)]
    pub quiet: bool,
    /// The command to run and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}
