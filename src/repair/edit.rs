//! Every change the repair makes to the raw input is an [`Edit`]: what kind, where in the raw
//! bytes, at which JSON pointer of the result, and what it costs. One cost table for all.

use serde::Serialize;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EditKind {
    /// The whole input read as JSON5 (single quotes, unquoted keys, comments, trailing commas).
    Json5Dialect,
    /// Text before the object dropped (prose, a code fence, a stray word).
    DropPrefix,
    /// Text after the object dropped.
    DropSuffix,
    /// A second object identical to the first dropped.
    DropDuplicate,
    DropStrayCloser,
    InsertCloser,
    ReplaceCloser,
    InsertOpenBrace,
    InsertComma,
    DropComma,
    InsertColon,
    DropComment,
    QuoteKey,
    SingleToDoubleQuotes,
    EscapeInnerQuote,
    EscapeControlChar,
    /// A backslash that starts no JSON escape kept as a literal backslash.
    KeepBackslash,
    /// Unquoted words read as one string.
    BareString,
    /// An unquoted run read as an array, split on top-level commas.
    BareList,
    /// Unbracketed comma-separated values read as an array.
    UnbracketedList,
    /// A single value wrapped into a one-item array.
    WrapInArray,
    /// `True`, `False`, `None`, `undefined` read as JSON literals.
    ForeignLiteral,
    /// A bare token read as a number.
    BareNumber,
    /// A string that holds JSON, read as the array or object the schema expects.
    ParseStringified,
    /// A string that is exactly a JSON number, where the schema wants a number.
    NumericString,
    /// `"true"` or `"false"` where the schema wants a boolean.
    BooleanString,
    /// The whole input was a JSON string holding the JSON object.
    DoubleEncoded,
    /// The input was written in a tool-call XML syntax (`<parameter name="k">v</parameter>`).
    ForeignSyntax,
    /// A key missing its opening or closing quote (`description":`, `"selected: [`).
    RepairKeyQuote,
    /// An escape sequence written out between tokens (`,\n  "limit"` with a literal `\n`).
    DropLiteralEscape,
    /// `(…)` used for an array.
    ParenForBracket,
    /// Input of only whitespace, read as `{}`.
    EmptyInput,
    /// The object started again after an unfinished copy: the copy is closed here.
    CloseRestarted,
    /// `{"name": …, "parameters": {…}}` around the input: the input taken out.
    UnwrapEnvelope,
    /// A full-width colon or comma (`：`, `，`) between members read as JSON's.
    WidePunctuation,
    /// A keyword argument's `=` after a declared key (`timeout=30`) read as the colon.
    EqualsForColon,
}

impl EditKind {
    /// The cost table: cheap edits change only syntax, dear ones decide what text means.
    pub fn cost(self) -> u32 {
        use EditKind::*;
        match self {
            DropComment | DropComma | InsertComma | InsertColon | QuoteKey | SingleToDoubleQuotes | WidePunctuation
            | EqualsForColon => 1,
            InsertCloser | ReplaceCloser | DropStrayCloser | EscapeControlChar | ForeignLiteral => 1,
            Json5Dialect | DropDuplicate | InsertOpenBrace | BareNumber => 2,
            DropPrefix | DropSuffix | KeepBackslash | BareString | WrapInArray => 3,
            EscapeInnerQuote | UnbracketedList | ParseStringified => 4,
            BareList => 5,
            NumericString | BooleanString | DoubleEncoded | ParenForBracket | EmptyInput => 2,
            RepairKeyQuote | DropLiteralEscape | CloseRestarted | UnwrapEnvelope => 3,
            ForeignSyntax => 4,
        }
    }

    pub fn name(self) -> &'static str {
        use EditKind::*;
        match self {
            Json5Dialect => "json5_dialect",
            DropPrefix => "drop_prefix",
            DropSuffix => "drop_suffix",
            DropDuplicate => "drop_duplicate",
            DropStrayCloser => "drop_stray_closer",
            InsertCloser => "insert_closer",
            ReplaceCloser => "replace_closer",
            InsertOpenBrace => "insert_open_brace",
            InsertComma => "insert_comma",
            DropComma => "drop_comma",
            InsertColon => "insert_colon",
            DropComment => "drop_comment",
            QuoteKey => "quote_key",
            SingleToDoubleQuotes => "single_to_double_quotes",
            EscapeInnerQuote => "escape_inner_quote",
            EscapeControlChar => "escape_control_char",
            KeepBackslash => "keep_backslash",
            BareString => "bare_string",
            BareList => "bare_list",
            UnbracketedList => "unbracketed_list",
            WrapInArray => "wrap_in_array",
            ForeignLiteral => "foreign_literal",
            BareNumber => "bare_number",
            ParseStringified => "parse_stringified",
            NumericString => "numeric_string",
            BooleanString => "boolean_string",
            DoubleEncoded => "double_encoded",
            ForeignSyntax => "foreign_syntax",
            RepairKeyQuote => "repair_key_quote",
            DropLiteralEscape => "drop_literal_escape",
            ParenForBracket => "paren_for_bracket",
            EmptyInput => "empty_input",
            CloseRestarted => "close_restarted",
            UnwrapEnvelope => "unwrap_envelope",
            WidePunctuation => "wide_punctuation",
            EqualsForColon => "equals_for_colon",
        }
    }
}

/// One change: `span` is a byte range of the raw input (empty for an insertion), `pointer` the
/// JSON pointer of the value it belongs to in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub kind: EditKind,
    pub span: [usize; 2],
    pub pointer: String,
    pub cost: u32,
}

impl Edit {
    pub fn new(kind: EditKind, span: Range<usize>, pointer: impl Into<String>) -> Self {
        Self { kind, span: [span.start, span.end], pointer: pointer.into(), cost: kind.cost() }
    }
}

/// Total cost of a list of edits.
pub fn total_cost(edits: &[Edit]) -> u32 {
    edits.iter().map(|e| e.cost).sum()
}
