//! The line per tool printed when the wrapped command ends.

use crate::repair::Status;
use crate::telemetry::Metrics;

/// The outcomes the summary counts; `valid` calls needed nothing and only show in the total.
const REPORTED: [Status; 3] = [Status::Repaired, Status::Refused, Status::Invalid];

/// One line per tool with a call that was not valid, or one line saying there was none.
pub fn render(metrics: &Metrics) -> String {
    let mut text = String::new();
    let mut valid = 0;
    for tool in metrics.tool_labels() {
        valid += metrics.tool_call_count(&tool, Status::Valid.as_str());
        let counts = REPORTED.map(|outcome| metrics.tool_call_count(&tool, outcome.as_str()));
        if counts.iter().any(|&n| n > 0) {
            let parts: Vec<String> =
                counts.iter().zip(REPORTED).map(|(n, outcome)| format!("{n} {}", outcome.as_str())).collect();
            text.push_str(&format!("toolmend: {tool}: {}\n", parts.join(", ")));
        }
    }
    if text.is_empty() {
        let calls = if valid == 1 { "call" } else { "calls" };
        text = format!("toolmend: {valid} tool {calls}, none needed repair\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_tool_that_had_a_call_that_was_not_valid() {
        let metrics = Metrics::new(10);
        assert_eq!(render(&metrics), "toolmend: 0 tool calls, none needed repair\n");
        metrics.count_tool_call("Bash", "valid");
        assert_eq!(render(&metrics), "toolmend: 1 tool call, none needed repair\n");
        for outcome in ["repaired", "repaired", "refused", "valid"] {
            metrics.count_tool_call("mcp__search__search", outcome);
        }
        metrics.count_tool_call("Write", "invalid");
        assert_eq!(
            render(&metrics),
            "toolmend: Write: 0 repaired, 0 refused, 1 invalid\n\
             toolmend: mcp__search__search: 2 repaired, 1 refused, 0 invalid\n"
        );
    }
}
