//! The `toolmend` binary: argument parsing and exit codes around the library.

use anyhow::{Context, Result};
use clap::Parser;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use tokio_util::sync::CancellationToken;
use toolmend::cli::{
    Cli, Command, ExamplesArgs, FixTranscriptArgs, HookCommand, HookInstallArgs, PostToolBatchArgs, RepairArgs,
    RunArgs, ScanArgs, ServeArgs, SettingsScope, StrictCheckArgs,
};
use toolmend::offline::report::Reporter;
use toolmend::offline::{Repairer, Summary, ToolCatalog};
use toolmend::proxy::settings::{self, Flags};
use toolmend::proxy::Server;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read before `main`: a background thread returns freed memory to the
/// system within about a second even when the sidecar is idle (without it, memory is only
/// returned during later allocations).
#[cfg(feature = "jemalloc")]
#[export_name = "_rjem_malloc_conf"]
static JEMALLOC_OPTIONS: &[u8; 60] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A reader that stops early (`| head`) ends the output, not the process with a panic.
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        if message.contains("Broken pipe") {
            // A write this file does not make through `out!`: still the end of the output.
            std::process::exit(0);
        }
        eprintln!("{message}");
    }));
    let result = match cli.command {
        Command::Serve(args) => run_serve(args),
        Command::Run(args) => run_wrapped(args),
        Command::Demo => run_demo(),
        Command::Repair(args) => run_repair(args),
        Command::StrictCheck(args) => run_strict_check(args),
        Command::Examples(args) => run_examples(args),
        Command::Scan(args) => run_scan(args),
        Command::FixTranscript(args) => run_fix_transcript(args),
        Command::Hook(HookCommand::PostToolBatch(args)) => Ok(run_post_tool_batch(args)),
        Command::Hook(HookCommand::Install(args)) => run_hook_install(args),
        Command::Hook(HookCommand::Uninstall(scope)) => run_hook_uninstall(scope),
    };
    match result {
        Ok(code) => code,
        // A reader that stopped early (`| head`) is the end of the output, not an error.
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolmend: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// `print!`/`println!` that give a failed write back as an error (`?`) instead of panicking:
/// a reader that stopped early (`| head`) then ends the command quietly, exit 0.
macro_rules! out {
    ($($arg:tt)*) => { write!(io::stdout().lock(), $($arg)*) };
}
macro_rules! outln {
    ($($arg:tt)*) => { writeln!(io::stdout().lock(), $($arg)*) };
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")
}

fn init_logging(default_level: &str) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLMEND_LOG").unwrap_or_else(|_| default_level.into()),
        )
        .with_writer(io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&io::stderr()))
        .init();
}

fn run_serve(args: ServeArgs) -> Result<ExitCode> {
    init_logging("info");
    let config = settings::resolve(serve_flags(args), |key| std::env::var(key).ok())?;
    runtime()?.block_on(async move {
        let server = Server::bind(config.clone()).await?;
        if toolmend::run::env::is_the_sidecar(&config.upstream, server.local_addr()) {
            anyhow::bail!(
                "the upstream {} is this sidecar itself ({}): every request would come back to it. Name the real \
                 endpoint with --upstream (is ANTHROPIC_BASE_URL or TOOLMEND_UPSTREAM left over?)",
                config.upstream_redacted(),
                server.local_addr()
            );
        }
        tracing::info!(listen = %server.local_addr(), upstream = %config.upstream_redacted(), "toolmend serving");
        let shutdown = CancellationToken::new();
        let trigger = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("shutting down: open streams may finish");
            trigger.cancel();
        });
        server.run(shutdown).await.context("serving")?;
        Ok(ExitCode::SUCCESS)
    })
}

fn serve_flags(args: ServeArgs) -> Flags {
    Flags {
        config: args.config,
        listen: args.listen,
        upstream: args.upstream,
        capture: args.capture,
        allow_remote: args.allow_remote,
        redact_inputs: args.redact_inputs,
    }
}

/// `toolmend run -- COMMAND`: the command's exit code; the summary unless `--quiet`.
fn run_wrapped(args: RunArgs) -> Result<ExitCode> {
    // Warnings only: the command may be an interactive program that owns the terminal.
    init_logging("warn");
    let file = settings::resolve_file(serve_flags(args.serve), |key| std::env::var(key).ok())?;
    let config = toolmend::run::sidecar_config(file, std::env::var_os("ANTHROPIC_BASE_URL").as_deref());
    match runtime()?.block_on(toolmend::run::run(config, &args.command)) {
        Ok(finished) => {
            if !args.quiet {
                eprint!("{}", finished.summary);
            }
            Ok(ExitCode::from(finished.exit_code))
        }
        Err(error) => {
            let code = error.exit_code();
            eprintln!("toolmend: {:#}", anyhow::Error::new(error));
            Ok(ExitCode::from(code))
        }
    }
}

fn run_hook_install(args: HookInstallArgs) -> Result<ExitCode> {
    let scope = toolmend::hook_install::Scope::from_flags(&args.scope);
    eprintln!("toolmend: {}", toolmend::hook_install::install_here(scope, args.report.as_deref())?);
    Ok(ExitCode::SUCCESS)
}

fn run_hook_uninstall(flags: SettingsScope) -> Result<ExitCode> {
    let scope = toolmend::hook_install::Scope::from_flags(&flags);
    eprintln!("toolmend: {}", toolmend::hook_install::uninstall_here(scope)?);
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C, or SIGTERM where it can be installed (if not, Ctrl-C still works).
async fn wait_for_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot handle SIGTERM; stop with Ctrl-C (SIGINT)");
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

fn run_demo() -> Result<ExitCode> {
    let report = runtime()?.block_on(toolmend::demo::run()).map_err(|e| anyhow::anyhow!(e))?;
    out!("{report}")?;
    Ok(ExitCode::SUCCESS)
}

fn run_strict_check(args: StrictCheckArgs) -> Result<ExitCode> {
    let report = match &args.tools {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let tools = toolmend::offline::tools_from_text(&text).with_context(|| path.display().to_string())?;
            toolmend::offline::strict_check::strict_check(&tools)
        }
        None => Vec::new(),
    };
    let adapted = args.state.as_deref().map(toolmend::proxy::adaptive::read_state).transpose()?;
    if args.json {
        let out = match &adapted {
            Some(adapted) => serde_json::json!({"tools": report, "adapted": adapted}),
            None => serde_json::to_value(&report)?,
        };
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", toolmend::offline::strict_check::render_text(&report))?;
    if let Some(adapted) = &adapted {
        outln!("adapted ({} tools made strict by adaptive mode):", adapted.len())?;
        for adaptation in adapted {
            outln!("  {}: since call {} was {}", adaptation.tool, adaptation.tool_use_id, adaptation.outcome)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolmend examples --from FILE`: an `[examples]` block on stdout; bad lines on stderr.
fn run_examples(args: ExamplesArgs) -> Result<ExitCode> {
    let path = &args.from;
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut entries = Vec::new();
    let mut bad_lines = 0;
    for (number, line) in text.lines().enumerate() {
        match toolmend::proxy::examples::parse_line(line) {
            Ok(Some(entry)) => entries.push(entry),
            Ok(None) => {}
            Err(message) => {
                eprintln!("toolmend: {} line {}: {message}", path.display(), number + 1);
                bad_lines += 1;
            }
        }
    }
    if entries.is_empty() {
        eprintln!("toolmend: no repaired inputs in {}", path.display());
        return Ok(ExitCode::from(1));
    }
    let (block, left_out) = toolmend::proxy::examples::config_block(&entries);
    for (tool, reason) in &left_out {
        eprintln!("toolmend: an input of {tool} left out: {reason}");
    }
    out!("{block}")?;
    Ok(if bad_lines > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

fn tools_option(path: Option<&Path>) -> Result<ToolCatalog> {
    match path {
        Some(path) => ToolCatalog::from_value(&read_json(path)?)
            .with_context(|| format!("{}: expected a tools array or an MCP tools/list result", path.display())),
        None => Ok(ToolCatalog::default()),
    }
}

fn run_scan(args: ScanArgs) -> Result<ExitCode> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::path::PathBuf::from(std::env::var("HOME").context("HOME is not set")?).join(".claude/projects"),
    };
    let found =
        toolmend::offline::scan::transcript_files(&dir).with_context(|| format!("reading {}", dir.display()))?;
    let repairer = Repairer::new(tools_option(args.tools.as_deref())?);
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let on_terminal = std::io::IsTerminal::is_terminal(&io::stderr());
    let progress = |done: usize, total: usize| {
        if on_terminal && (done % 64 == 0 || done == total) {
            eprint!("\rscanning {done}/{total} transcripts");
            if done == total {
                eprintln!();
            }
        }
    };
    let report =
        toolmend::offline::scan::scan(&found.files, &repairer, threads, &progress).with_problems(found.problems);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", toolmend::offline::scan::render_table(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn run_fix_transcript(args: FixTranscriptArgs) -> Result<ExitCode> {
    // `-` is standard output, never a file named `-`.
    let to_stdout = args.output.as_os_str() == "-";
    if !to_stdout && args.output.symlink_metadata().is_ok() {
        anyhow::bail!("{} exists; fix-transcript never writes over a file", args.output.display());
    }
    let bytes = toolmend::offline::open::read_regular_file(&args.input)
        .with_context(|| format!("reading {}", args.input.display()))?;
    let repairer = Repairer::new(tools_option(args.tools.as_deref())?);
    let (fixed, summary) = toolmend::offline::fix::fix_transcript(&bytes, &repairer);
    let written = if to_stdout {
        let mut stdout = io::stdout().lock();
        stdout.write_all(&fixed).and_then(|()| stdout.flush()).context("writing standard output")?;
        "standard output".to_string()
    } else {
        toolmend::offline::fix::write_copy(&args.output, &args.input, &fixed)
            .with_context(|| format!("writing {}", args.output.display()))?;
        args.output.display().to_string()
    };
    eprintln!(
        "toolmend: {} calls repaired, {} left as they were, {} lines changed; wrote {written}",
        summary.repaired.len(),
        summary.refused.len(),
        summary.lines_changed,
    );
    for (id, reason) in &summary.refused {
        eprintln!("  {id}: {reason}");
    }
    for (line, id) in &summary.not_located {
        eprintln!("  line {line}: the input of {id} could not be located; left unchanged");
    }
    for (line, problem) in &summary.bad_lines {
        let problem = problem.strip_suffix(": skipped").unwrap_or(problem);
        eprintln!("  {}:{line}: {problem}; copied as it was", args.input.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Never fails the hook: every problem becomes a line on stderr and exit 0.
fn run_post_tool_batch(args: PostToolBatchArgs) -> ExitCode {
    match post_tool_batch(args) {
        Err(error) if !is_broken_pipe(&error) => eprintln!("toolmend hook: {error:#}"),
        _ => {}
    }
    ExitCode::SUCCESS
}

fn post_tool_batch(args: PostToolBatchArgs) -> Result<()> {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).context("reading the hook input")?;
    let (hook_input, lossy) =
        toolmend::offline::transcript::parse_value(&input).context("the hook input is not JSON")?;
    let repairer = Repairer::new(tools_option(args.tools.as_deref())?);
    let run = toolmend::offline::hook::findings(&hook_input, lossy, &repairer);
    for note in &run.notes {
        eprintln!("toolmend hook: {note}");
    }
    let findings = run.findings;
    if let Some(output) = toolmend::offline::hook::hook_output(&findings) {
        outln!("{output}")?;
    }
    if findings.is_empty() || (args.report.is_none() && args.report_file.is_none()) {
        return Ok(());
    }
    let mut reporter = Reporter::new(args.report.as_deref(), args.report_file.as_deref())?;
    for finding in &findings {
        if let Err(error) = reporter.report(&finding.event()) {
            eprintln!("toolmend hook: {:#}", anyhow::Error::new(error));
        }
    }
    Ok(())
}

fn run_repair(args: RepairArgs) -> Result<ExitCode> {
    if let Some(schema_path) = &args.schema {
        return repair_one(schema_path, args.stop_reason);
    }
    if args.stop_reason.is_some() {
        anyhow::bail!("--stop-reason needs --schema (records carry their own stop_reason)");
    }
    let repairer = Repairer::new(tools_option(args.tools.as_deref())?);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut diagnostics = io::stderr();
    let mut total = Summary::default();
    let mut skipped_files = 0;
    let files = if args.files.is_empty() { vec!["-".into()] } else { args.files };
    for file in &files {
        let summary = if file.as_os_str() == "-" {
            repairer.run(io::stdin().lock(), "<stdin>", &mut out, &mut diagnostics)
        } else if file.is_dir() {
            eprintln!("toolmend: {}: is a directory: skipped", file.display());
            skipped_files += 1;
            continue;
        } else {
            match std::fs::File::open(file) {
                Ok(handle) => {
                    repairer.run(BufReader::new(handle), &file.display().to_string(), &mut out, &mut diagnostics)
                }
                Err(error) => {
                    eprintln!("toolmend: {}: {error}: skipped", file.display());
                    skipped_files += 1;
                    continue;
                }
            }
        };
        total.add(&summary.context("writing the results")?);
    }
    out.flush()?;
    eprintln!(
        "toolmend: {} repaired, {} refused, {} invalid, {} valid, {} bad lines, {} files skipped",
        total.repaired, total.refused, total.invalid, total.valid, total.bad_lines, skipped_files
    );
    Ok(if skipped_files > 0 || total.bad_lines > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

/// `toolmend repair --schema FILE < raw`: the JSON on stdout (exit 0) if it is valid against
/// the schema or was repaired; otherwise the status and reason on stderr (exit 1): `refused`,
/// or `invalid` for valid JSON that breaks the schema.
fn repair_one(schema_path: &Path, stop_reason: Option<String>) -> Result<ExitCode> {
    let schema = ToolSchema::compile(&read_json(schema_path)?).with_context(|| schema_path.display().to_string())?;
    let mut raw = String::new();
    io::stdin().read_to_string(&mut raw).context("reading the raw input from stdin")?;
    let options = RepairOptions { stop_reason, ..RepairOptions::default() };
    let outcome = repair(&raw, Some(&schema), &options);
    match (outcome.status, outcome.input) {
        (Status::Valid, Some(input)) => {
            // The input's own bytes (minus the BOM the CLI drops), never re-spelled.
            match toolmend::offline::valid_text(&raw) {
                Some(text) if text.ends_with('\n') => out!("{text}")?,
                Some(text) => outln!("{text}")?,
                None => outln!("{input}")?,
            }
            Ok(ExitCode::SUCCESS)
        }
        (Status::Repaired, Some(input)) => {
            outln!("{input}")?;
            Ok(ExitCode::SUCCESS)
        }
        (status, _) => {
            let reason = outcome.reason.map(|r| r.to_string()).unwrap_or_default();
            eprintln!("toolmend: {}: {reason}", status.as_str());
            Ok(ExitCode::from(1))
        }
    }
}
