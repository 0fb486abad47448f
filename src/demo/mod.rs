//! `toolmend demo`: the seed's malformed call streamed by an embedded fake Messages API through
//! the real proxy, with the real repair, and what toolmend reports about it.

pub mod fake_upstream;
pub mod script;

use crate::proxy::{Config, Server};
use crate::stream::{parse_frame, FrameSplitter};
use fake_upstream::{FakeUpstream, Reply};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The recorded stream of the seed report: `terms` streamed as bare words.
pub const SEED_STREAM: &str = include_str!("../../fixtures/sse/seed-malformed.sse");

/// The seed's tool, as a request declares it.
pub fn seed_tools() -> Value {
    json!([{
        "name": "search",
        "description": "Search the regulation database",
        "input_schema": {
            "type": "object",
            "properties": {
                "jurisdiction": {"type": "string", "enum": ["se", "no", "dk", "fi"], "description": "Country code"},
                "terms": {"type": "array", "items": {"type": "string"}, "description": "Search terms"},
                "limit": {"type": "integer", "minimum": 1}
            },
            "required": ["jurisdiction", "terms"],
            "additionalProperties": false
        }
    }])
}

/// Tool inputs as the CLI assembles them: every `input_json_delta` of a block appended.
pub fn assembled_tool_inputs(stream: &[u8]) -> BTreeMap<u64, String> {
    let mut splitter = FrameSplitter::default();
    let mut frames = Vec::new();
    splitter.push(stream, &mut frames);
    let mut inputs = BTreeMap::new();
    for frame in frames {
        let data: Value = parse_frame(&frame).data.and_then(|d| serde_json::from_str(&d).ok()).unwrap_or_default();
        if data["delta"]["type"] == "input_json_delta" {
            let input: &mut String = inputs.entry(data["index"].as_u64().unwrap_or(0)).or_default();
            input.push_str(data["delta"]["partial_json"].as_str().unwrap_or_default());
        }
    }
    inputs
}

/// Runs the demo and returns the report to print.
pub async fn run() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    crate::init_tls();
    let upstream = FakeUpstream::start(Arc::new(|_| Reply::sse(SEED_STREAM, 64))).await?;
    let config = Config { listen: "127.0.0.1:0".parse()?, upstream: upstream.url(), ..Config::default() };
    let server = Server::bind(config).await?;
    let proxy = format!("http://{}", server.local_addr());
    let stop = CancellationToken::new();
    let running = tokio::spawn(server.run(stop.clone()));

    let client = reqwest::Client::new();
    let request = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": true,
        "tools": seed_tools(),
        "messages": [{"role": "user", "content": "What is the payout percentage of token machines in Sweden?"}]
    });
    let response = client
        .post(format!("{proxy}/v1/messages"))
        .header("x-api-key", "demo-key-not-sent-anywhere")
        .header("anthropic-version", "2023-06-01")
        .json(&request)
        .send()
        .await?;
    let streamed = response.bytes().await?;
    let events: Value = client.get(format!("{proxy}/events")).send().await?.json().await?;
    let metrics = client.get(format!("{proxy}/metrics")).send().await?.text().await?;
    stop.cancel();
    let _ = running.await;

    let raw = assembled_tool_inputs(SEED_STREAM.as_bytes()).remove(&1).unwrap_or_default();
    let reissued = assembled_tool_inputs(&streamed).remove(&1).unwrap_or_default();
    let event = &events["events"][0];
    let mut report = String::new();
    writeln!(report, "toolmend demo: a fake Messages API on {} streams a tool call through the", upstream.url())?;
    writeln!(report, "real proxy on {proxy}.\n")?;
    writeln!(report, "The model streamed this input for tool `search` (not JSON):")?;
    writeln!(report, "  {raw}")?;
    writeln!(report, "Claude Code would answer InputValidationError, and no hook would fire.\n")?;
    writeln!(report, "toolmend re-issued the call in the stream as:")?;
    writeln!(report, "  {reissued}\n")?;
    writeln!(report, "Edits ({}):", event["outcome"].as_str().unwrap_or("?"))?;
    for edit in event["edits"].as_array().into_iter().flatten() {
        writeln!(
            report,
            "  {:<12} bytes {}..{} of the raw input, at {}  (cost {})",
            edit["kind"].as_str().unwrap_or("?"),
            edit["span"][0],
            edit["span"][1],
            edit["pointer"].as_str().unwrap_or(""),
            edit["cost"]
        )?;
    }
    writeln!(report, "\nMetrics (GET /metrics):")?;
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("toolmend_tool_calls_total") || l.starts_with("toolmend_repair_edits_total"))
    {
        writeln!(report, "  {line}")?;
    }
    Ok(report)
}
