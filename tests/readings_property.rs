//! The engine's rule, checked by brute force: for generated schemas and bare texts holding the
//! schema's key names, undeclared names, quoted names and comment markers, a repaired result is
//! the one reading that validates among every way of splitting the text into members.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

const DECLARED: [&str; 3] = ["command", "description", "path"];
const UNDECLARED: [&str; 2] = ["name", "TODO"];
const WORDS: [&str; 5] = ["ls", "deploy", "src/x.py", "run-it", "EOF"];

#[derive(Debug, Clone)]
enum Token {
    Word(&'static str),
    /// An unquoted `key:` at a line start.
    LineKey(&'static str),
    /// A quoted `"key":` after a space: weak, even when declared.
    QuotedKey(&'static str),
    /// `, "key":` — a member's shape, always structure.
    CommaQuotedKey(&'static str),
}

fn token() -> impl Strategy<Value = Token> {
    let names = || prop::sample::select([DECLARED.as_slice(), UNDECLARED.as_slice()].concat());
    prop_oneof![
        3 => prop::sample::select(WORDS.to_vec()).prop_map(Token::Word),
        2 => names().prop_map(Token::LineKey),
        1 => names().prop_map(Token::QuotedKey),
        1 => names().prop_map(Token::CommaQuotedKey),
    ]
}

/// The bare text, and for each key token its byte range `key_start..after_colon` and whether
/// the split there is fixed policy (a strong key) rather than a choice.
struct Text {
    text: String,
    splits: Vec<Split>,
}

struct Split {
    /// Where the previous value ends (before a separating comma, if any).
    value_end: usize,
    name: &'static str,
    /// Where the next value starts (after the colon).
    after_colon: usize,
    strong: bool,
}

fn render(comment: Option<&str>, tokens: &[Token]) -> Text {
    let mut text = String::new();
    if let Some(comment) = comment {
        text.push_str(comment);
    }
    let mut splits = Vec::new();
    for token in tokens {
        let value_end = text.len();
        match token {
            Token::Word(word) => {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(word);
            }
            Token::LineKey(name) => {
                text.push('\n');
                text.push_str(name);
                text.push(':');
                splits.push(Split { value_end, name, after_colon: text.len(), strong: false });
            }
            Token::QuotedKey(name) => {
                text.push_str(&format!(" \"{name}\":"));
                splits.push(Split { value_end, name, after_colon: text.len(), strong: false });
            }
            Token::CommaQuotedKey(name) => {
                text.push_str(&format!(", \"{name}\":"));
                splits.push(Split { value_end, name, after_colon: text.len(), strong: true });
            }
        }
    }
    // Every key is followed by a word, so no value is empty.
    text.push_str(" end");
    Text { text, splits }
}

/// Every reading of `{"command": <text>}`: each weak split taken or not, each strong one taken,
/// a comment at the value's start dropped or kept. Unquoted words only count as keys where the
/// schema declares them, or takes undeclared ones.
fn brute_force(text: &Text, comment_len: usize, schema: &ToolSchema, open: bool) -> BTreeSet<String> {
    let usable: Vec<&Split> = text
        .splits
        .iter()
        .filter(|s| {
            let quoted = text.text[..s.after_colon].ends_with("\":");
            quoted || open || DECLARED.contains(&s.name)
        })
        .collect();
    let weak: Vec<usize> = (0..usable.len()).filter(|&i| !usable[i].strong).collect();
    let mut fitting = BTreeSet::new();
    for mask in 0u32..(1 << weak.len()) {
        let taken: Vec<&Split> = (0..usable.len())
            .filter(|i| usable[*i].strong || weak.iter().position(|w| w == i).is_some_and(|bit| mask & (1 << bit) != 0))
            .map(|i| usable[i])
            .collect();
        for drop_comment in [false, true] {
            if drop_comment && comment_len == 0 {
                continue;
            }
            let mut members: Vec<(String, String)> = Vec::new();
            let mut start = if drop_comment { comment_len } else { 0 };
            let mut key = "command".to_string();
            for split in &taken {
                members.push((key, text.text[start..split.value_end].trim().to_string()));
                key = split.name.to_string();
                start = split.after_colon;
            }
            members.push((key, text.text[start..].trim().to_string()));
            let mut object = Map::new();
            let mut clash = false;
            for (k, v) in members {
                // A value that starts with a quote is a JSON string, not bare text.
                // A key given twice with the same value is one member (a dropped duplicate).
                let v = Value::String(v);
                if v == "" || v.as_str().is_some_and(|s| s.starts_with('"')) {
                    clash = true;
                }
                if object.insert(k, v.clone()).is_some_and(|previous| previous != v) {
                    clash = true;
                }
            }
            let value = Value::Object(object);
            if !clash && schema.first_violation(&value).is_none() {
                fitting.insert(value.to_string());
            }
        }
    }
    fitting
}

fn schema(closed: bool) -> ToolSchema {
    let mut schema = json!({
        "type": "object",
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}, "path": {"type": "string"}},
        "required": ["command"]
    });
    if closed {
        schema["additionalProperties"] = json!(false);
    }
    ToolSchema::compile(&schema).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn a_repair_is_the_one_reading_that_validates(
        closed in any::<bool>(),
        comment in prop::option::of(prop::sample::select(vec!["/*/src/*.py ", "/* a */ ", "// note\n"])),
        tokens in prop::collection::vec(token(), 1..7),
    ) {
        let schema = schema(closed);
        let text = render(comment, &tokens);
        let raw = format!("{{\"command\": {}}}", text.text);
        let outcome = repair(&raw, Some(&schema), &RepairOptions { stop_reason: Some("tool_use".into()), ..RepairOptions::default() });
        if outcome.status == Status::Repaired {
            let got = outcome.input.unwrap().to_string();
            // `/*/src/*.py` has no closing `*/`: it is not a comment, only text.
            let comment_len = comment.filter(|c| !c.starts_with("/*/")).map_or(0, str::len);
            let fitting = brute_force(&text, comment_len, &schema, !closed);
            prop_assert!(
                fitting.len() == 1 && fitting.contains(&got),
                "{raw:?} repaired to {got} but the readings that validate are {fitting:?}"
            );
        }
    }
}
