//! The lenient parse's output: a JSON-like tree with byte spans into the raw input.

use serde_json::Number;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: NodeKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// Comma-separated values with no brackets, where the schema expects an array.
    List(Vec<Node>),
    Str(String),
    Number(Number),
    Bool(bool),
    Null,
    /// Unquoted text; the schema decides what it means.
    Bare(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub key_span: Range<usize>,
    pub value: Node,
}

impl Node {
    /// The node at a JSON pointer (`/a/0`), or the deepest node on the way.
    pub fn at_pointer(&self, pointer: &str) -> &Node {
        let mut node = self;
        for segment in pointer.split('/').skip(1) {
            let segment = segment.replace("~1", "/").replace("~0", "~");
            let next = match &node.kind {
                NodeKind::Object(members) => members.iter().rev().find(|m| m.key == segment).map(|m| &m.value),
                NodeKind::Array(items) | NodeKind::List(items) => {
                    segment.parse::<usize>().ok().and_then(|i| items.get(i))
                }
                _ => None,
            };
            match next {
                Some(child) => node = child,
                None => break,
            }
        }
        node
    }
}
