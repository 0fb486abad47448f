//! Strict injection: `strict: true` and a normalized schema on the configured tools of a
//! Messages API request, within the API's limits, touching only the `tools` entries it changes.

use super::tools_rewrite::{RequestTools, Rewrite};
use crate::schema::strict::{normalize, StrictSchema};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The API's limits across one request.
pub const MAX_STRICT_TOOLS: usize = 20;
pub const MAX_OPTIONAL_PARAMS: usize = 24;
pub const MAX_UNION_PARAMS: usize = 16;

/// `[strict]` in the config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StrictConfig {
    /// Exact names or globs (`mcp__retrieval__*`), in priority order.
    #[serde(default)]
    pub tools: Vec<String>,
    /// `"compatible"`: every tool whose schema fits; `"adaptive"`: every tool whose call was
    /// repaired, refused or invalid, from the next request on.
    pub mode: Option<StrictMode>,
    /// An extra `anthropic-beta` value to send with injected requests.
    pub beta: Option<String>,
    /// Where adaptive mode keeps the tools it chose, across restarts (created 0600).
    pub state_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StrictMode {
    Compatible,
    Adaptive,
}

impl StrictConfig {
    pub fn is_enabled(&self) -> bool {
        !self.tools.is_empty() || self.mode.is_some()
    }

    pub fn is_adaptive(&self) -> bool {
        self.mode == Some(StrictMode::Adaptive)
    }

    /// The priority of a tool name: the index of the first matching pattern (compatible mode
    /// ranks every other tool after the listed ones, adaptive mode the adapted ones).
    fn priority(&self, name: &str, adapted: &BTreeSet<String>) -> Option<usize> {
        let listed = self.tools.iter().position(|pattern| glob_matches(pattern, name));
        listed.or(match self.mode {
            Some(StrictMode::Compatible) => Some(self.tools.len()),
            Some(StrictMode::Adaptive) if adapted.contains(name) => Some(self.tools.len()),
            _ => None,
        })
    }
}

/// `*` matches any run, `?` any one character.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// What injection would do to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictPlan {
    pub rewrite: Rewrite,
    pub injected: Vec<String>,
    pub skipped: Vec<(String, String)>,
}

/// Plans injection for a request's tools; `None` when there is nothing to change or report.
/// `adapted`: the tools adaptive mode has chosen so far.
pub fn plan(tools: &RequestTools, config: &StrictConfig, adapted: &BTreeSet<String>) -> Option<StrictPlan> {
    let (mut strict_count, mut optional, mut unions) = (0, 0, 0);
    for index in (0..tools.len()).filter(|&i| tools.is_strict(i)) {
        strict_count += 1;
        if let Ok(counted) = normalize(&tools.entry(index)["input_schema"]) {
            optional += counted.optional_params;
            unions += counted.union_params;
        }
    }
    let mut candidates: Vec<(usize, usize)> = (0..tools.len())
        .filter(|&i| !tools.is_strict(i) && tools.has_schema(i))
        .filter_map(|i| Some((config.priority(tools.name(i)?, adapted)?, i)))
        .collect();
    candidates.sort();

    let mut replacements: Vec<(usize, Value)> = Vec::new();
    let (mut injected, mut skipped) = (Vec::new(), Vec::new());
    for (_, index) in candidates {
        let tool = tools.entry(index);
        let name = tools.name(index).unwrap_or_default().to_string();
        let normalized: StrictSchema = match normalize(&tool["input_schema"]) {
            Ok(normalized) => normalized,
            Err(why) => {
                skipped.push((name, format!("incompatible: {why}")));
                continue;
            }
        };
        let over = if strict_count + 1 > MAX_STRICT_TOOLS {
            Some(format!("over the limit of {MAX_STRICT_TOOLS} strict tools"))
        } else if optional + normalized.optional_params > MAX_OPTIONAL_PARAMS {
            Some(format!("over the limit of {MAX_OPTIONAL_PARAMS} optional parameters"))
        } else if unions + normalized.union_params > MAX_UNION_PARAMS {
            Some(format!("over the limit of {MAX_UNION_PARAMS} union-typed parameters"))
        } else {
            None
        };
        if let Some(reason) = over {
            skipped.push((name, reason));
            continue;
        }
        strict_count += 1;
        optional += normalized.optional_params;
        unions += normalized.union_params;
        let mut rewritten = tool.clone();
        rewritten["input_schema"] = normalized.schema;
        rewritten["strict"] = Value::Bool(true);
        replacements.push((index, rewritten));
        injected.push(name);
    }
    if replacements.is_empty() && skipped.is_empty() {
        return None;
    }
    Some(StrictPlan { rewrite: Rewrite::new("strict", replacements), injected, skipped })
}

/// Whether a 400 from the API blames the strict schemas.
pub fn blames_strict_schema(error_body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(error_body).to_lowercase();
    ["schema is too complex", "compiled grammar is too large", "input_schema", "strict"]
        .iter()
        .any(|needle| text.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn globs() {
        for (pattern, name, expected) in [
            ("mcp__retrieval__*", "mcp__retrieval__search", true),
            ("mcp__retrieval__*", "mcp__other__search", false),
            ("search", "search", true),
            ("se?rch", "search", true),
            ("*", "anything", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
        ] {
            assert_eq!(glob_matches(pattern, name), expected, "{pattern} {name}");
        }
    }

    /// The plan and the body it yields.
    fn planned(body: &str, config: &StrictConfig, adapted: &[&str]) -> Option<(StrictPlan, Vec<u8>)> {
        let mut tools = RequestTools::parse(body.as_bytes())?;
        let adapted: BTreeSet<String> = adapted.iter().map(|s| s.to_string()).collect();
        let plan = plan(&tools, config, &adapted)?;
        tools.apply(&plan.rewrite);
        Some((plan, tools.body()))
    }

    fn tool(name: &str, optional: usize) -> Value {
        let properties: serde_json::Map<String, Value> =
            (0..optional).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        json!({"name": name, "description": "d", "input_schema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn only_chosen_tools_change_and_the_rest_of_the_body_keeps_its_bytes() {
        let body = format!(
            r#"{{"model":"m",  "tools":[{},{}], "messages":[{{"role":"user","content":"hi  there"}}]}}"#,
            tool("mcp__a__x", 1),
            tool("other", 1)
        );
        let config = StrictConfig { tools: vec!["mcp__a__*".into()], ..StrictConfig::default() };
        let (plan, out) = planned(&body, &config, &[]).unwrap();
        assert_eq!(plan.injected, ["mcp__a__x"]);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.starts_with(r#"{"model":"m",  "tools":[{"name":"mcp__a__x""#), "{text}");
        assert!(text
            .ends_with(&format!(r#",{}], "messages":[{{"role":"user","content":"hi  there"}}]}}"#, tool("other", 1))));
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["tools"][0]["strict"], true);
        assert_eq!(parsed["tools"][0]["input_schema"]["additionalProperties"], false);
        assert_eq!((plan, out), planned(&body, &config, &[]).unwrap(), "the same request gives the same bytes");
    }

    #[test]
    fn limits_are_respected_in_config_order_with_a_reason_per_skipped_tool() {
        let tools: Vec<Value> = (0..22).map(|i| tool(&format!("t{i:02}"), 0)).chain([tool("wide", 30)]).collect();
        let body = json!({"tools": tools}).to_string();
        let config = StrictConfig { tools: vec!["wide".into(), "t*".into()], ..StrictConfig::default() };
        let (plan, _) = planned(&body, &config, &[]).unwrap();
        assert_eq!(plan.injected.len(), MAX_STRICT_TOOLS);
        assert_eq!(plan.injected[0], "t00");
        let skipped: Vec<(&str, &str)> = plan.skipped.iter().map(|(n, r)| (n.as_str(), r.as_str())).collect();
        assert_eq!(
            skipped,
            [
                ("wide", "over the limit of 24 optional parameters"),
                ("t20", "over the limit of 20 strict tools"),
                ("t21", "over the limit of 20 strict tools")
            ]
        );
    }

    #[test]
    fn tools_already_strict_count_toward_the_limit_and_stay_untouched() {
        let mut already = tool("mine", 0);
        already["strict"] = json!(true);
        let tools: Vec<Value> = std::iter::repeat_n(already, 20).chain([tool("x", 0)]).collect();
        let body = json!({"tools": tools}).to_string();
        let config = StrictConfig { mode: Some(StrictMode::Compatible), ..StrictConfig::default() };
        let (plan, out) = planned(&body, &config, &[]).unwrap();
        assert!(plan.injected.is_empty());
        assert_eq!(out, body.as_bytes());
        assert_eq!(plan.skipped, [("x".to_string(), "over the limit of 20 strict tools".to_string())]);
    }

    #[test]
    fn adaptive_mode_chooses_the_adapted_tools_after_the_listed_ones_and_no_other() {
        let body = json!({"tools": [tool("a", 0), tool("b", 0), tool("c", 0)]}).to_string();
        let config =
            StrictConfig { tools: vec!["c".into()], mode: Some(StrictMode::Adaptive), ..StrictConfig::default() };
        let (plan, _) = planned(&body, &config, &["b", "gone"]).unwrap();
        assert_eq!(plan.injected, ["c", "b"]);
        let config = StrictConfig { mode: Some(StrictMode::Adaptive), ..StrictConfig::default() };
        assert!(planned(&body, &config, &[]).is_none(), "nothing adapted yet: nothing changes");
    }
}
