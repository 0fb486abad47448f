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
    /// Show the main job on an embedded fake API: a malformed call repaired in the stream.
    Demo,
    /// Repair recorded tool calls (JSON Lines records, transcripts, captures), or one raw input.
    Repair(RepairArgs),
    /// Show which tools `serve` could make strict, their normalized schemas, or why not.
    StrictCheck(StrictCheckArgs),
}

#[derive(Debug, Args)]
pub struct StrictCheckArgs {
    /// An Anthropic `tools` array, an MCP `tools/list` result, a Claude Code transcript, or
    /// JSON Lines records with `tool` and `schema`.
    #[arg(long, value_name = "FILE")]
    pub tools: PathBuf,
    /// One JSON array instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Flags win over `TOOLMEND_*` variables, which win over the config file.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8787].
    #[arg(long, env = "TOOLMEND_LISTEN", value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The Messages API to forward to [default: https://api.anthropic.com].
    #[arg(long, env = "TOOLMEND_UPSTREAM", value_name = "URL")]
    pub upstream: Option<String>,
    /// A TOML config file (see the README for its keys).
    #[arg(long, env = "TOOLMEND_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Allow binding an address other than loopback.
    #[arg(long, env = "TOOLMEND_ALLOW_REMOTE")]
    pub allow_remote: bool,
    /// Append every call that was not valid to this JSON Lines file (mode 0600).
    #[arg(long, env = "TOOLMEND_CAPTURE", value_name = "FILE")]
    pub capture: Option<PathBuf>,
    /// Leave raw and repaired inputs out of /events.
    #[arg(long, env = "TOOLMEND_REDACT_INPUTS")]
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
