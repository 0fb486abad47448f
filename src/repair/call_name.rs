//! Which tool a call wrapper names. A wrapper may name its tool in many spellings — an
//! attribute (`name="X"`, `NAME = 'X'`, `tool=X`, `function:“X”`, `id="X"`), the `=X` of
//! `<function=X>`, a bare word (`<function X>`), a code fence's info string (```` ```X ````) —
//! and a model that wrote another tool's name there meant that tool's call. So every value a
//! wrapper's attributes hold must name this tool, and text in them that reads as none of these
//! spellings refuses: it is never ignored.
//!
//! Which tags and special tokens are a call syntax's at all is decided here too, by their exact
//! names: a tag or token that only starts like one (`<tool_dry_run>`, `<function_example>`,
//! `<|do_not_execute|>`) says how the call is meant, so it is text, never a wrapper.

use super::lenient::names_this_tool;
use super::lexeme;

/// Why a wrapper is not this call: it names `other`, or its attributes do not read.
#[derive(Debug, PartialEq, Eq)]
pub enum NotThisCall {
    Names(String),
    Unreadable(String),
}

impl NotThisCall {
    pub fn message(&self) -> String {
        match self {
            NotThisCall::Names(other) => format!("the call is written for tool '{other}'"),
            NotThisCall::Unreadable(text) => format!("the wrapper's attributes do not read as a tool's name: '{text}'"),
        }
    }
}

/// Pairs of quotes a model may put around an attribute's value.
const QUOTES: [(char, char); 9] =
    [('"', '"'), ('\'', '\''), ('“', '”'), ('”', '”'), ('‘', '’'), ('’', '’'), ('«', '»'), ('„', '“'), ('＂', '＂')];

/// Checks the attributes of a wrapper tag (the text after its name, before `>`): each value
/// they give, in any spelling, must name `tool`.
pub fn attributes_name_this_tool(attributes: &str, tool: Option<&str>) -> Result<(), NotThisCall> {
    let text = attributes.trim().trim_end_matches(['|', '｜', '/']).trim_end();
    let unreadable = || NotThisCall::Unreadable(attributes.trim().to_string());
    // `<function=X>`, `<function = X>`: the tag's own value.
    let mut rest = match text.strip_prefix(['=', ':']) {
        Some(value) => {
            let (name, after) = value_at(value.trim_start()).ok_or_else(unreadable)?;
            if !after.trim().is_empty() {
                return Err(unreadable());
            }
            return check(name, tool);
        }
        None => text,
    };
    while !rest.is_empty() {
        let key_len = rest.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))).unwrap_or(rest.len());
        if key_len == 0 {
            // A quote or a sign where a key belongs (`"x"=name`): nothing to compare.
            return Err(unreadable());
        }
        let after_key = rest[key_len..].trim_start();
        rest = match after_key.strip_prefix(['=', ':']) {
            // `key=value`, `key = "value"`, `key:"value"`: the value must name this tool,
            // whatever the key (`name`, `tool`, `function`, `id`, a misspelling).
            Some(value) => {
                let (name, after) = value_at(value.trim_start()).ok_or_else(unreadable)?;
                check(name, tool)?;
                after.trim_start()
            }
            // A bare word (`<function X>`): a name in the name's position.
            None => {
                check(&rest[..key_len], tool)?;
                after_key
            }
        };
    }
    Ok(())
}

/// Tag names of the call syntaxes models write around or instead of JSON: Claude's
/// `function_calls`, `invoke`, `parameter`; Hermes' and Qwen's `tool_call`, `function`; GLM's
/// `arg_key`, `arg_value`; DeepSeek's `tool_calls`; the `tool_use` and `tool_input` of prompts
/// that teach an XML call. Each is compared whole, after `/`, `|` and `｜DSML｜` are dropped.
const CALL_TAGS: [&str; 10] = [
    "function_calls",
    "invoke",
    "parameter",
    "tool_call",
    "tool_calls",
    "function",
    "arg_key",
    "arg_value",
    "tool_use",
    "tool_input",
];

/// XML namespaces a call syntax puts on its tags (`<minimax:tool_call>`). Any other namespace
/// is part of the name (`<dry_run:invoke>` is not an `invoke`).
const CALL_NAMESPACES: [&str; 2] = ["minimax", "antml"];

/// Chat templates' special tokens that open a call (Kimi's, Llama's, Phi's and Granite's).
const OPENING_TOKENS: [&str; 6] = [
    "tool_calls_section_begin",
    "tool_call_begin",
    "tool_call_argument_begin",
    "tool_call",
    "python_tag",
    "python_start",
];

/// Special tokens that end a call or the turn it is in (Kimi's, Llama's, Phi's, ChatML's,
/// harmony's).
const ENDING_TOKENS: [&str; 10] = [
    "tool_call_end",
    "tool_calls_section_end",
    "python_end",
    "eot_id",
    "eom_id",
    "end",
    "im_end",
    "endoftext",
    "call",
    "/tool_call",
];

/// The name of a tag as a call syntax writes it (the text between `<` and `>`): without the
/// `/` of a closing tag, the `|` or `｜DSML｜` decorations, and a known namespace.
fn tag_name(tag: &str) -> &str {
    let inner = tag.trim_start_matches(['/', '|', '｜']);
    let inner = inner.strip_prefix("DSML").map_or(inner, |rest| rest.trim_start_matches(['|', '｜']));
    let end = inner.find(|c: char| c.is_whitespace() || matches!(c, '=' | '|' | '｜' | '/')).unwrap_or(inner.len());
    local_name(&inner[..end])
}

/// `name` without a namespace a call syntax uses; any other namespace stays in the name.
pub fn local_name(name: &str) -> &str {
    match name.split_once(':') {
        Some((namespace, local)) if CALL_NAMESPACES.contains(&namespace.to_ascii_lowercase().as_str()) => local,
        _ => name,
    }
}

/// Whether the tag (the text between `<` and `>`) is one of a call syntax's, by its exact name.
pub fn is_call_tag(tag: &str) -> bool {
    CALL_TAGS.contains(&tag_name(tag).to_ascii_lowercase().as_str())
}

/// Whether `<|token|>` is a known special token of a chat template's call syntax.
pub fn is_call_token(token: &str) -> bool {
    OPENING_TOKENS.contains(&token) || is_ending_token(token)
}

/// Whether `<|token|>` is a known special token that ends a call or its turn.
pub fn is_ending_token(token: &str) -> bool {
    ENDING_TOKENS.contains(&token)
}

/// Whether a tag token of a call syntax (`<invoke name="X">`, `<function X>`, `<|tool_call|>`)
/// may open this call: a parameter's tag (its name is a key's), or a wrapper (opening or
/// closing) whose attributes, if any, name this tool.
pub fn tag_names_this_tool(token: &str, tool: Option<&str>) -> bool {
    let Some(inner) = token.strip_prefix('<').and_then(|t| t.strip_suffix('>')) else {
        return true;
    };
    let inner = inner.trim_start_matches(['/', '|', '｜']);
    let inner = inner.strip_prefix("DSML").map_or(inner, |rest| rest.trim_start_matches(['|', '｜']));
    let name_end = inner.find(|c: char| c.is_whitespace() || matches!(c, '=' | '|' | '｜')).unwrap_or(inner.len());
    let name = local_name(&inner[..name_end]).to_ascii_lowercase();
    matches!(name.as_str(), "parameter" | "arg_key" | "arg_value")
        || attributes_name_this_tool(&inner[name_end..], tool).is_ok()
}

/// The value at the start of `text`, quoted in any of [`QUOTES`] (its pair must close it) or
/// bare up to white space; and the text after it.
pub fn value_at(text: &str) -> Option<(&str, &str)> {
    let first = text.chars().next()?;
    if let Some((_, close)) = QUOTES.iter().find(|(open, _)| *open == first) {
        let body = &text[first.len_utf8()..];
        let end = body.find(*close)?;
        let name = &body[..end];
        // A quote of another kind inside (`"X'`): the value's end is unknown.
        return (!name.contains(|c: char| is_quote(c))).then(|| (name, &body[end + close.len_utf8()..]));
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    let name = &text[..end];
    (!name.is_empty() && !name.contains(|c: char| is_quote(c) || matches!(c, '=' | '<' | '>')))
        .then(|| (name, &text[end..]))
}

fn is_quote(c: char) -> bool {
    QUOTES.iter().any(|(open, close)| c == *open || c == *close)
}

fn check(name: &str, tool: Option<&str>) -> Result<(), NotThisCall> {
    match names_this_tool(name, tool) {
        true => Ok(()),
        false => Err(NotThisCall::Names(name.to_string())),
    }
}

/// Languages a code fence around a call's JSON may be tagged with: none of them names a tool.
const LANGUAGE_TAGS: [&str; 16] = [
    "json",
    "jsonc",
    "json5",
    "jsonl",
    "javascript",
    "js",
    "typescript",
    "ts",
    "xml",
    "yaml",
    "yml",
    "text",
    "txt",
    "plaintext",
    "tool_code",
    "tool_calls",
];

/// Whether a code fence's info string (the text after ```` ``` ````) may open this call: empty,
/// a language tag, or this tool's name. Any other word may be another tool's name.
pub fn fence_info_names_this_tool(info: &str, tool: Option<&str>) -> bool {
    info.split_whitespace().all(|word| {
        LANGUAGE_TAGS.contains(&word.to_ascii_lowercase().as_str())
            || (lexeme::identifier_len(word) == Some(word.len()) && names_this_tool(word, tool))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: Option<&str> = Some("mcp__github__merge_pull_request");

    #[test]
    fn every_spelling_of_another_tools_name_refuses() {
        let other = "get_pull_request";
        for attributes in [
            " name=get_pull_request",
            " name = \"get_pull_request\"",
            " NAME=\"get_pull_request\"",
            " name=“get_pull_request”",
            " name=«get_pull_request»",
            " tool=\"get_pull_request\"",
            " function='get_pull_request'",
            " tool_name=\"get_pull_request\"",
            " id=\"get_pull_request\"",
            " name:\"get_pull_request\"",
            " name=get_pull_request/",
            "=get_pull_request",
            " = get_pull_request",
            " get_pull_request",
            " name=\"merge_pull_request\" name=\"get_pull_request\"",
            " type=\"get_pull_request\" name=\"merge_pull_request\"",
        ] {
            assert_eq!(
                attributes_name_this_tool(attributes, TOOL),
                Err(NotThisCall::Names(other.into())),
                "{attributes:?}"
            );
        }
        let full = attributes_name_this_tool(" name=mcp__github__get_pull_request", TOOL);
        assert_eq!(full, Err(NotThisCall::Names("mcp__github__get_pull_request".into())));
        let dotted = attributes_name_this_tool(" name=github.merge_pull_request", TOOL);
        assert_eq!(dotted, Err(NotThisCall::Names("github.merge_pull_request".into())));
    }

    #[test]
    fn attributes_that_do_not_read_refuse() {
        for attributes in [
            " name=\"get_pull_request'",
            " name=\"get_pull_request",
            " name=\"merge_pull_request",
            " \"x\"=name",
            " name=>",
        ] {
            assert!(
                matches!(attributes_name_this_tool(attributes, TOOL), Err(NotThisCall::Unreadable(_))),
                "{attributes:?}"
            );
        }
        // Unreadable even where the tool is not known: nothing says which call it is.
        assert!(attributes_name_this_tool(" name=\"x'", None).is_err());
    }

    #[test]
    fn this_tools_name_in_any_spelling_passes() {
        for attributes in [
            "",
            " ",
            "|",
            " name=\"merge_pull_request\"",
            " name=\"mcp__github__merge_pull_request\"",
            " NAME = 'merge_pull_request'",
            " name=merge_pull_request",
            "=merge_pull_request",
            " merge_pull_request",
            " name=“merge_pull_request”",
            " type=\"function\" name=\"merge_pull_request\"",
            " name=\"merge_pull_request\"/",
        ] {
            assert_eq!(attributes_name_this_tool(attributes, TOOL), Ok(()), "{attributes:?}");
        }
        assert_eq!(attributes_name_this_tool(" name=get_pull_request", None), Ok(()));
    }

    #[test]
    fn call_tags_and_tokens_are_known_by_their_whole_names() {
        for tag in
            ["invoke name=\"x\"", "/function_calls", "minimax:tool_call", "|tool_call", "｜DSML｜invoke", "function=x"]
        {
            assert!(is_call_tag(tag), "{tag:?}");
        }
        for tag in ["tool_dry_run", "invoke_later", "function_example", "dry_run:invoke", "toolbox", "caller"] {
            assert!(!is_call_tag(tag), "{tag:?}");
        }
        assert!(is_call_token("python_tag") && is_ending_token("tool_call_end"));
        assert!(!is_call_token("do_not_execute") && !is_ending_token("pending"));
    }

    #[test]
    fn a_fence_tagged_with_a_language_or_this_tool_opens_the_call() {
        for info in
            ["", "json", "JSON", " jsonc ", "js", "xml", "merge_pull_request", "json merge_pull_request", "tool_code"]
        {
            assert!(fence_info_names_this_tool(info, TOOL), "{info:?}");
        }
        for info in ["get_pull_request", "json get_pull_request", "read_file", "bash", "json {x}", "github.merge"] {
            assert!(!fence_info_names_this_tool(info, TOOL), "{info:?}");
        }
        assert!(fence_info_names_this_tool("read_file", None));
    }
}
