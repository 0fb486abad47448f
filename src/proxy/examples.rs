//! Examples injection: configured example inputs, each validated against the tool's schema as
//! the request carries it, set as `input_examples` on that tool's entry. MCP and SDK tools
//! cannot declare them: the SDK and the CLI drop the field, so the sidecar adds it.

use super::strict::glob_matches;
use super::tools_rewrite::{RequestTools, Rewrite};
use crate::schema::SchemaCache;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The `anthropic-beta` value tool-use examples need on the Anthropic API.
pub const DEFAULT_BETA: &str = "advanced-tool-use-2025-11-20";

/// `[examples]` in the config file: `"tool name or glob" = [ {example input}, ... ]`, plus the
/// string keys `beta` and `examples_file`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
pub struct ExamplesConfig {
    /// Patterns and their examples, in name order (TOML tables keep no order).
    pub tools: Vec<(String, Vec<Value>)>,
    /// The extra `anthropic-beta` value sent with injected requests (`""`: none).
    pub beta: String,
    /// JSON Lines of `{tool, input}` (the sidecar's capture file qualifies).
    pub examples_file: Option<PathBuf>,
}

impl Default for ExamplesConfig {
    fn default() -> Self {
        Self { tools: Vec::new(), beta: DEFAULT_BETA.into(), examples_file: None }
    }
}

impl TryFrom<Map<String, Value>> for ExamplesConfig {
    type Error = String;

    fn try_from(table: Map<String, Value>) -> Result<Self, String> {
        let mut config = Self::default();
        for (key, value) in table {
            match (key.as_str(), value) {
                ("beta", Value::String(beta)) => config.beta = beta,
                ("examples_file", Value::String(path)) => config.examples_file = Some(path.into()),
                (_, Value::Array(examples)) => config.tools.push((key, examples)),
                (_, _) => {
                    return Err(format!(
                        "examples.{key}: expected a list of example inputs (or a string for beta, examples_file)"
                    ))
                }
            }
        }
        Ok(config)
    }
}

/// A line of an examples file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("examples file {path}{}: {message}", .line.map(|n| format!(" line {n}")).unwrap_or_default())]
pub struct ExamplesError {
    pub path: String,
    /// `None` when the file itself could not be read.
    pub line: Option<usize>,
    pub message: String,
}

/// One `{tool, input}` line. `Ok(None)`: a line with nothing to use (blank, or a capture line
/// of a call that was not repaired).
pub fn parse_line(line: &str) -> Result<Option<(String, Value)>, String> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let record: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    if record.get("status").is_some_and(|s| s != "repaired") {
        return Ok(None);
    }
    let tool = record["tool"].as_str().ok_or("expected a string \"tool\"")?;
    match &record["input"] {
        Value::Object(_) => Ok(Some((tool.to_string(), record["input"].clone()))),
        _ => Err("expected an object \"input\"".into()),
    }
}

/// The examples of every tool, from the config and its examples file.
#[derive(Debug, Clone, Default)]
pub struct ExampleSet {
    entries: Vec<(String, Value)>,
}

impl ExampleSet {
    pub fn load(config: &ExamplesConfig) -> Result<Self, ExamplesError> {
        let mut entries: Vec<(String, Value)> = config
            .tools
            .iter()
            .flat_map(|(pattern, examples)| examples.iter().map(move |e| (pattern.clone(), e.clone())))
            .collect();
        if let Some(path) = &config.examples_file {
            entries.extend(read_file(path)?);
        }
        Ok(Self { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A tool's examples: those of every matching pattern, in order, each once.
    fn for_tool(&self, name: &str) -> Vec<&Value> {
        let mut found: Vec<&Value> = Vec::new();
        for (_, example) in self.entries.iter().filter(|(pattern, _)| glob_matches(pattern, name)) {
            if !found.contains(&example) {
                found.push(example);
            }
        }
        found
    }
}

fn read_file(path: &Path) -> Result<Vec<(String, Value)>, ExamplesError> {
    let error = |line, message| ExamplesError { path: path.display().to_string(), line, message };
    let text = std::fs::read_to_string(path).map_err(|e| error(None, e.to_string()))?;
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if let Some(entry) = parse_line(line).map_err(|message| error(Some(number + 1), message))? {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// A `[examples]` block for the config file from `{tool, input}` entries (say, the repaired
/// inputs of a capture file): each tool's distinct inputs, tools in the order first seen. An
/// input TOML cannot hold (a `null`) is left out and returned with the reason.
pub fn config_block(entries: &[(String, Value)]) -> (String, Vec<(String, String)>) {
    let mut tools: Vec<(&str, Vec<String>)> = Vec::new();
    let mut left_out = Vec::new();
    for (tool, input) in entries {
        let inline = match toml::Value::try_from(input) {
            Ok(value) => value.to_string(),
            Err(error) => {
                left_out.push((tool.clone(), format!("not representable in TOML: {error}")));
                continue;
            }
        };
        match tools.iter_mut().find(|(name, _)| name == tool) {
            Some((_, inputs)) if inputs.contains(&inline) => {}
            Some((_, inputs)) => inputs.push(inline),
            None => tools.push((tool, vec![inline])),
        }
    }
    let mut text = String::from("[examples]\n");
    for (tool, inputs) in tools {
        text.push_str(&format!("{} = [\n", toml::Value::String(tool.to_string())));
        for input in inputs {
            text.push_str(&format!("    {input},\n"));
        }
        text.push_str("]\n");
    }
    (text, left_out)
}

/// An example left out, and why.
#[derive(Debug, Clone, PartialEq, Hash)]
pub struct Skipped {
    pub tool: String,
    /// Its position among the tool's examples; `None` when the whole tool was left out.
    pub example: Option<usize>,
    pub reason: String,
}

/// What examples injection would do to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ExamplesPlan {
    pub rewrite: Rewrite,
    /// Each tool given examples, with how many.
    pub injected: Vec<(String, usize)>,
    pub skipped: Vec<Skipped>,
}

/// Plans injection against each tool's schema as it will be sent (after strict injection);
/// `None` when no tool of the request has examples.
pub fn plan(tools: &RequestTools, set: &ExampleSet, schemas: &SchemaCache) -> Option<ExamplesPlan> {
    let (mut replacements, mut injected, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for index in 0..tools.len() {
        let Some(name) = tools.name(index) else { continue };
        let examples = set.for_tool(name);
        if examples.is_empty() {
            continue;
        }
        let entry = tools.entry(index);
        let skip_all = |reason: String| Skipped { tool: name.to_string(), example: None, reason };
        if entry.get("input_examples").is_some() {
            skipped.push(skip_all("the request already carries input_examples for this tool".into()));
            continue;
        }
        let schema = match entry.get("input_schema").map(|schema| schemas.get_or_compile(schema)) {
            Some(Ok(schema)) => schema,
            Some(Err(error)) => {
                skipped.push(skip_all(error.to_string()));
                continue;
            }
            None => {
                skipped.push(skip_all("the tool has no input_schema".into()));
                continue;
            }
        };
        let mut valid = Vec::new();
        for (position, example) in examples.into_iter().enumerate() {
            let violation = match example {
                Value::Object(_) => schema
                    .first_violation(example)
                    .map(|(pointer, message)| format!("does not fit the schema at '{pointer}': {message}")),
                _ => Some("an example input must be an object".into()),
            };
            match violation {
                Some(reason) => skipped.push(Skipped { tool: name.to_string(), example: Some(position), reason }),
                None => valid.push(example.clone()),
            }
        }
        if valid.is_empty() {
            continue;
        }
        injected.push((name.to_string(), valid.len()));
        let mut rewritten = entry.clone();
        rewritten["input_examples"] = Value::Array(valid);
        replacements.push((index, rewritten));
    }
    if replacements.is_empty() && skipped.is_empty() {
        return None;
    }
    Some(ExamplesPlan { rewrite: Rewrite::new("examples", replacements), injected, skipped })
}

/// Whether a 400 from the API blames the examples.
pub fn blames_examples(error_body: &[u8]) -> bool {
    String::from_utf8_lossy(error_body).to_lowercase().contains("input_examples")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn search_tool() -> Value {
        json!({"name": "mcp__search__search", "description": "d", "input_schema": {
            "type": "object",
            "properties": {"jurisdiction": {"type": "string", "enum": ["se", "dk"]},
                           "terms": {"type": "array", "items": {"type": "string"}}},
            "required": ["jurisdiction", "terms"]}})
    }

    #[derive(Debug, Deserialize)]
    struct File {
        examples: ExamplesConfig,
    }

    fn config(toml_text: &str) -> ExamplesConfig {
        toml::from_str::<File>(toml_text).unwrap().examples
    }

    #[test]
    fn the_config_table_holds_patterns_in_name_order_and_two_settings() {
        let parsed = config(
            r#"[examples]
            "mcp__search__*" = [{ jurisdiction = "se", terms = ["a"] }]
            beta = ""
            examples_file = "x.jsonl"
            "a" = []"#,
        );
        assert_eq!(
            parsed.tools,
            [("a".into(), vec![]), ("mcp__search__*".into(), vec![json!({"jurisdiction": "se", "terms": ["a"]})])]
        );
        assert_eq!((parsed.beta.as_str(), parsed.examples_file), ("", Some("x.jsonl".into())));
        assert_eq!(ExamplesConfig::default().beta, DEFAULT_BETA);
        let error = toml::from_str::<File>("[examples]\ntool = 5").unwrap_err().to_string();
        assert!(error.contains("examples.tool: expected a list of example inputs"), "{error}");
    }

    #[test]
    fn valid_examples_land_on_the_matching_entry_and_invalid_ones_are_skipped_with_a_reason() {
        let body =
            json!({"model": "m", "tools": [{"name": "other", "input_schema": {"type": "object"}}, search_tool()]})
                .to_string();
        let set = ExampleSet::load(&config(
            r#"[examples]
            "mcp__search__search" = [{ jurisdiction = "se", terms = ["slot machine", "payout"] },
                                     { jurisdiction = "se", terms = "payout" }]
            "mcp__*" = [{ jurisdiction = "se", terms = ["slot machine", "payout"] }, { jurisdiction = "fr", terms = [] }]"#,
        ))
        .unwrap();
        let mut tools = RequestTools::parse(body.as_bytes()).unwrap();
        let plan = plan(&tools, &set, &SchemaCache::new(8)).unwrap();
        assert_eq!(plan.injected, [("mcp__search__search".to_string(), 1)]);
        let reasons: Vec<(Option<usize>, &str)> = plan.skipped.iter().map(|s| (s.example, s.reason.as_str())).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        // `mcp__*` sorts before `mcp__search__search`; the repeated example counts once.
        assert_eq!((reasons[0].0, reasons[1].0), (Some(1), Some(2)));
        assert!(reasons[0].1.starts_with("does not fit the schema at '/jurisdiction'"), "{reasons:?}");
        assert!(reasons[1].1.starts_with("does not fit the schema at '/terms'"), "{reasons:?}");
        tools.apply(&plan.rewrite);
        let out: Value = serde_json::from_slice(&tools.body()).unwrap();
        assert_eq!(
            out["tools"][1]["input_examples"],
            json!([{"jurisdiction": "se", "terms": ["slot machine", "payout"]}])
        );
        assert!(out["tools"][0].get("input_examples").is_none());
        let again = super::plan(&RequestTools::parse(body.as_bytes()).unwrap(), &set, &SchemaCache::new(8)).unwrap();
        assert_eq!(again, plan, "the same request gives the same plan");
    }

    #[test]
    fn a_tool_that_already_has_examples_is_left_alone() {
        let mut tool = search_tool();
        tool["input_examples"] = json!([]);
        let body = json!({"tools": [tool]}).to_string();
        let set =
            ExampleSet::load(&config("[examples]\n\"mcp__search__search\" = [{ jurisdiction = \"se\", terms = [] }]"))
                .unwrap();
        let plan = plan(&RequestTools::parse(body.as_bytes()).unwrap(), &set, &SchemaCache::new(8)).unwrap();
        assert!(plan.rewrite.is_empty());
        assert_eq!(plan.skipped[0].example, None);
    }

    #[test]
    fn file_lines_are_tool_and_input_and_capture_lines_count_only_when_repaired() {
        for (line, expected) in [
            (r#"{"tool": "t", "input": {"a": 1}}"#, Ok(Some(("t".to_string(), json!({"a": 1}))))),
            (
                r#"{"tool": "t", "status": "repaired", "input": {"a": 1}, "raw": "{a: 1}"}"#,
                Ok(Some(("t".to_string(), json!({"a": 1})))),
            ),
            (r#"{"tool": "t", "status": "refused", "input": null}"#, Ok(None)),
            ("  ", Ok(None)),
            (r#"{"tool": "t", "input": [1]}"#, Err("expected an object \"input\"".to_string())),
            (r#"{"input": {}}"#, Err("expected a string \"tool\"".to_string())),
        ] {
            assert_eq!(parse_line(line), expected, "{line}");
        }
        assert!(parse_line("{").unwrap_err().starts_with("not JSON"));
    }

    #[test]
    fn a_bad_examples_file_line_is_an_error_that_names_the_file_and_line() {
        let path = std::env::temp_dir().join(format!("toolmend-examples-{}.jsonl", std::process::id()));
        std::fs::write(&path, "{\"tool\": \"t\", \"input\": {}}\n\n{\"tool\": 1}\n").unwrap();
        let config = ExamplesConfig { examples_file: Some(path.clone()), ..ExamplesConfig::default() };
        let error = ExampleSet::load(&config).unwrap_err();
        assert_eq!((error.line, error.message.as_str()), (Some(3), "expected a string \"tool\""));
        assert!(error.to_string().ends_with(".jsonl line 3: expected a string \"tool\""), "{error}");
        std::fs::write(&path, "{\"tool\": \"t\", \"input\": {}}\n").unwrap();
        assert_eq!(ExampleSet::load(&config).unwrap().for_tool("t"), [&json!({})]);
        let _ = std::fs::remove_file(&path);
        let error = ExampleSet::load(&config).unwrap_err();
        assert_eq!(error.line, None, "a missing file is an error too: {error}");
    }

    #[test]
    fn the_config_file_takes_examples_and_adaptive_strict() {
        let file: crate::proxy::FileConfig = toml::from_str(
            r#"[strict]
            mode = "adaptive"
            state_file = "/tmp/s.json"
            [examples]
            "t" = [{ a = 1 }]"#,
        )
        .unwrap();
        let config = crate::proxy::Config::from_file(file);
        assert!(config.strict.is_adaptive() && config.strict.is_enabled());
        assert_eq!(config.strict.state_file, Some("/tmp/s.json".into()));
        assert_eq!(config.examples.tools, [("t".to_string(), vec![json!({"a": 1})])]);
        assert_eq!(crate::proxy::Config::default().examples, ExamplesConfig::default());
    }

    #[test]
    fn a_config_block_reads_back_as_the_same_examples() {
        let entries = [
            ("mcp__search__search".to_string(), json!({"jurisdiction": "se", "terms": ["token \"machine\""]})),
            ("b".to_string(), json!({"n": 1.5, "deep": {"x": [true]}})),
            ("mcp__search__search".to_string(), json!({"jurisdiction": "se", "terms": ["token \"machine\""]})),
            ("b".to_string(), json!({"n": null})),
        ];
        let (text, left_out) = config_block(&entries);
        assert_eq!(left_out.len(), 1, "{left_out:?}");
        assert_eq!(left_out[0].0, "b");
        let parsed = config(&text);
        assert_eq!(
            parsed.tools,
            [
                ("b".to_string(), vec![json!({"n": 1.5, "deep": {"x": [true]}})]),
                (
                    "mcp__search__search".to_string(),
                    vec![json!({"jurisdiction": "se", "terms": ["token \"machine\""]})]
                ),
            ],
            "{text}"
        );
    }

    #[test]
    fn only_errors_that_name_input_examples_blame_them() {
        assert!(blames_examples(br#"{"error": {"message": "tools.0.input_examples.0: does not match"}}"#));
        assert!(!blames_examples(br#"{"error": {"message": "tools.0.input_schema: bad"}}"#));
    }
}
