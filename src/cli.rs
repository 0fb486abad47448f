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
    /// Repair recorded tool calls (JSON Lines records, transcripts, captures), or one raw input.
    Repair(RepairArgs),
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
