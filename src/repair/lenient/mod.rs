//! The grammar-guided lenient parse (rung 3 of the ladder): a superset of JSON read into a tree
//! with byte spans. The schema guides it where JSON's own structure is missing: sibling key
//! names end bare runs and unescaped quotes, and array positions read unbracketed lists.

mod bare_marks;
mod brackets;
mod choices;
mod comments;
mod literal_syntax;
mod lookahead;
mod member_scope;
mod parser;
mod production;
mod second_reading;
mod string;
mod tree;
mod unicode;
pub(crate) mod wrapper;

pub use choices::Choices;
pub use parser::{parse_document, parse_reading, Document, KeptMember, ParseOptions};
pub use production::{Production, ProductionSet};
pub use tree::{Member, Node, NodeKind};
pub(crate) use wrapper::{mcp_short_name, names_this_tool};

use super::outcome::{Refusal, RefusalCode};

/// Where and why the text does not follow the lenient grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub code: RefusalCode,
    pub message: String,
    pub position: usize,
}

impl SyntaxError {
    fn new(code: RefusalCode, message: impl Into<String>, position: usize) -> Self {
        Self { code, message: message.into(), position }
    }

    pub fn into_refusal(self) -> Refusal {
        Refusal::new(self.code, self.message, Some(self.position))
    }
}
