//! The message's stop reason, typed: which reasons end a tool block normally and which mean its
//! input may have been cut.

/// Why the model stopped, as the Messages API names it. Reasons this build does not know are
/// kept as [`StopReason::Other`] and count as cuts: a future reason may well end a block early.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    ToolUse,
    EndTurn,
    StopSequence,
    PauseTurn,
    MaxTokens,
    ModelContextWindowExceeded,
    Refusal,
    Other(String),
}

impl StopReason {
    /// What a caller passes where the message must have stopped for a reason but none was
    /// recorded (a transcript or capture line with `stop_reason: null`). Like every reason this
    /// build does not know, it counts as a cut.
    pub const UNRECORDED: &'static str = "unrecorded";

    pub fn parse(text: &str) -> Self {
        match text {
            "tool_use" => Self::ToolUse,
            "end_turn" => Self::EndTurn,
            "stop_sequence" => Self::StopSequence,
            "pause_turn" => Self::PauseTurn,
            "max_tokens" => Self::MaxTokens,
            "model_context_window_exceeded" => Self::ModelContextWindowExceeded,
            "refusal" => Self::Refusal,
            other => Self::Other(other.to_string()),
        }
    }

    /// Whether the block ended the way blocks end: only then is its input known to be whole.
    /// A stop sequence is not such an end: generation stops wherever the sequence matched, so
    /// a tool block of that message may stop in the middle of its input (a finished call
    /// ends the message with `tool_use`).
    pub fn ends_block_normally(&self) -> bool {
        matches!(self, Self::ToolUse | Self::EndTurn | Self::PauseTurn)
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::ToolUse => "tool_use",
            Self::EndTurn => "end_turn",
            Self::StopSequence => "stop_sequence",
            Self::PauseTurn => "pause_turn",
            Self::MaxTokens => "max_tokens",
            Self::ModelContextWindowExceeded => "model_context_window_exceeded",
            Self::Refusal => "refusal",
            Self::Other(text) => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_three_normal_endings_leave_the_input_whole() {
        let table = [
            ("tool_use", true),
            ("end_turn", true),
            ("stop_sequence", false),
            ("pause_turn", true),
            ("max_tokens", false),
            ("model_context_window_exceeded", false),
            ("refusal", false),
            ("some_future_reason", false),
            (StopReason::UNRECORDED, false),
        ];
        for (text, whole) in table {
            let reason = StopReason::parse(text);
            assert_eq!(reason.ends_block_normally(), whole, "{text}");
            assert_eq!(reason.as_str(), text);
        }
    }
}
