//! The grammar's productions (grammars/tool-input.ebnf), recorded as the parser uses them so a
//! test can show every production is exercised by some fixture.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Production {
    Document,
    Prefix,
    Members,
    Suffix,
    Object,
    Member,
    Key,
    Separator,
    Closer,
    Array,
    List,
    Value,
    String,
    SingleString,
    Escape,
    BadEscape,
    Control,
    InnerQuote,
    Number,
    Literal,
    BareRun,
    Comment,
    Whitespace,
    Fence,
    DamagedKey,
    Restart,
    Tuple,
    LiteralEscape,
}

impl Production {
    pub const ALL: [Production; 28] = [
        Production::Document,
        Production::Prefix,
        Production::Members,
        Production::Suffix,
        Production::Object,
        Production::Member,
        Production::Key,
        Production::Separator,
        Production::Closer,
        Production::Array,
        Production::List,
        Production::Value,
        Production::String,
        Production::SingleString,
        Production::Escape,
        Production::BadEscape,
        Production::Control,
        Production::InnerQuote,
        Production::Number,
        Production::Literal,
        Production::BareRun,
        Production::Comment,
        Production::Whitespace,
        Production::Fence,
        Production::DamagedKey,
        Production::Restart,
        Production::Tuple,
        Production::LiteralEscape,
    ];

    /// The production's name in the EBNF file.
    pub fn name(self) -> &'static str {
        match self {
            Production::Document => "document",
            Production::Prefix => "prefix",
            Production::Members => "members",
            Production::Suffix => "suffix",
            Production::Object => "object",
            Production::Member => "member",
            Production::Key => "key",
            Production::Separator => "separator",
            Production::Closer => "closer",
            Production::Array => "array",
            Production::List => "list",
            Production::Value => "value",
            Production::String => "string",
            Production::SingleString => "single_string",
            Production::Escape => "escape",
            Production::BadEscape => "bad_escape",
            Production::Control => "control",
            Production::InnerQuote => "inner_quote",
            Production::Number => "number",
            Production::Literal => "literal",
            Production::BareRun => "bare_run",
            Production::Comment => "comment",
            Production::Whitespace => "ws",
            Production::Fence => "fence",
            Production::DamagedKey => "damaged_key",
            Production::Restart => "restart",
            Production::Tuple => "tuple",
            Production::LiteralEscape => "literal_escape",
        }
    }
}

/// A set of productions, one bit each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProductionSet(u32);

impl ProductionSet {
    pub fn insert(&mut self, production: Production) {
        self.0 |= 1 << production as u8;
    }

    pub fn contains(self, production: Production) -> bool {
        self.0 & (1 << production as u8) != 0
    }

    pub fn union(self, other: ProductionSet) -> ProductionSet {
        ProductionSet(self.0 | other.0)
    }
}
