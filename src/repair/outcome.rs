//! What the repair says about one tool call.

use super::edit::Edit;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// The input parsed as JSON: forwarded byte-identical.
    Valid,
    /// Repaired into an input that validates against the tool's schema.
    Repaired,
    /// Not repaired: the original bytes go through unchanged.
    Refused,
    /// Parsed as JSON but breaks the schema, and no lossless coercion mends it: handed on
    /// unchanged, reported so operators see schema violations too.
    Invalid,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::Repaired => "repaired",
            Status::Refused => "refused",
            Status::Invalid => "invalid",
        }
    }
}

/// Why a call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RefusalCode {
    /// The block was cut by `max_tokens`, or its recorded text was cut at 2048 chars.
    Truncated,
    TooLarge,
    TooDeep,
    /// Nothing that reads as a JSON object.
    NoObject,
    /// The text does not follow the lenient grammar at `position`.
    Syntax,
    /// Two different readings (two different objects, a key given twice, a union).
    Ambiguous,
    /// Text around the object that is not a recognized wrapper: it may belong to the call.
    TextOutside,
    /// The best reading does not validate against the tool's schema.
    SchemaMismatch,
    /// The tool's schema could not be compiled.
    UnusableSchema,
}

impl RefusalCode {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::Truncated => "truncated",
            RefusalCode::TooLarge => "too_large",
            RefusalCode::TooDeep => "too_deep",
            RefusalCode::NoObject => "no_object",
            RefusalCode::Syntax => "syntax",
            RefusalCode::Ambiguous => "ambiguous",
            RefusalCode::TextOutside => "text_outside",
            RefusalCode::SchemaMismatch => "schema_mismatch",
            RefusalCode::UnusableSchema => "unusable_schema",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub code: RefusalCode,
    pub message: String,
    /// Byte offset in the raw input the refusal points at, when there is one.
    pub position: Option<usize>,
}

impl Refusal {
    pub fn new(code: RefusalCode, message: impl Into<String>, position: Option<usize>) -> Self {
        Self { code, message: message.into(), position }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)?;
        if let Some(at) = self.position {
            write!(f, " (at byte {at})")?;
        }
        Ok(())
    }
}

/// The outcome of one call: `{status, input, edits, reason}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub status: Status,
    /// The parsed input (valid), the repaired input (repaired), or `None` (refused, or valid
    /// when the value was not read).
    pub input: Option<Value>,
    pub edits: Vec<Edit>,
    pub reason: Option<Refusal>,
}

impl Outcome {
    pub fn valid(input: Value) -> Self {
        Self { status: Status::Valid, input: Some(input), edits: Vec::new(), reason: None }
    }

    /// Valid, where the caller needs only the verdict (the stream passes the bytes on as they
    /// are and never reads the value).
    pub fn valid_unread() -> Self {
        Self { status: Status::Valid, input: None, edits: Vec::new(), reason: None }
    }

    pub fn repaired(input: Value, edits: Vec<Edit>) -> Self {
        Self { status: Status::Repaired, input: Some(input), edits, reason: None }
    }

    /// Parsed, broke the schema, nothing lossless mends it: `reason` says where.
    pub fn invalid(input: Value, reason: Refusal) -> Self {
        Self { status: Status::Invalid, input: Some(input), edits: Vec::new(), reason: Some(reason) }
    }

    pub fn refused(reason: Refusal) -> Self {
        Self { status: Status::Refused, input: None, edits: Vec::new(), reason: Some(reason) }
    }
}
