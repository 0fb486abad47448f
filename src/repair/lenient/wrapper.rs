//! Text around the object that a repair may drop: only recognized wrappers. A code fence (with
//! prose before it), a prose lead-in (`Running: {…}`) or closing sentence (`… now.`), the
//! tool-call syntax models leave around their input (`<invoke …>`, `</parameter>`,
//! `<|tool_call_end|>`, `name{…}`, `name({…})`). Anything else — command text such as
//! `cd /tmp && {…}` or `{…} --force` — may belong to the call, so the repair refuses.

use crate::repair::{call_name, lexeme};

/// What a dropped prefix was, so the suffix can close it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Opened {
    pub fence: bool,
    /// `name(` right before the object: its `)` may follow it.
    pub paren: bool,
    /// A prose lead-in (`Running: {…}`): one closing word may end its sentence (`… now.`).
    pub lead_in: bool,
}

/// Whether `text` (everything before the object's `{`) is a recognized wrapper, and what it
/// opened. Where the tool's name is known, a wrapper that names a tool must name this one.
pub fn prefix(text: &str, tool: Option<&str>) -> Option<Opened> {
    let mut opened = Opened::default();
    let mut rest = text.trim_start();
    // A call-syntax leftover glued to the brace: `name{` or `name({`.
    if let Some(before) = rest.strip_suffix('(') {
        opened.paren = true;
        rest = before;
    }
    let trimmed = rest.trim_end();
    let glued_name = trailing_identifier(trimmed);
    if trimmed.len() == rest.len() && !glued_name.is_empty() {
        if !names_this_tool(glued_name, tool) {
            return None;
        }
        rest = &rest[..rest.len() - glued_name.len()];
    } else if opened.paren {
        return None;
    }
    // Prose comes first or not at all: a lead-in, then the call's own syntax.
    let lead = rest.trim_start();
    let end = lead.find("```").or_else(|| lead.find('<')).or_else(|| lead.find('[')).unwrap_or(lead.len());
    let prose = lead[..end].trim_end();
    // A question (`Run this?`) asks whether to make the call: the call is not meant yet.
    if is_lead_in(prose, tool) && prose.ends_with([':', '.', '!']) && !prose.contains('?') {
        rest = &lead[end..];
        opened.lead_in = true;
    }
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Some(opened);
        }
        // A chat template's own header, naming the tool: gpt-oss's, DeepSeek's.
        if let Some((name, after)) = harmony_header(rest).or_else(|| deepseek_header(rest)) {
            if !names_this_tool(name, tool) {
                return None;
            }
            rest = after;
            continue;
        }
        if let Some(after) = tool_tag(rest).or_else(|| call_token(rest)) {
            let token = &rest[..rest.len() - after.len()];
            if !named_tool(token).is_none_or(|name| names_this_tool(name, tool))
                || !call_name::tag_names_this_tool(token, tool)
            {
                return None;
            }
            rest = after;
            continue;
        }
        if let Some(len) = lexeme::comment_len(rest) {
            // A comment is text around the object too: dropped only as a lead-in's words.
            let words = comment_words(&rest[..len]);
            if !words.is_empty() && !is_lead_in(words.trim_end_matches([':', '.', '!']), tool) {
                return None;
            }
            rest = &rest[len..];
            continue;
        }
        if let Some(len) = lexeme::fence_len(rest) {
            if !call_name::fence_info_names_this_tool(&rest[3..len], tool) {
                return None;
            }
            opened.fence = true;
            rest = &rest[len..];
            continue;
        }
        // A fence whose backticks were lost: a lone `json` line.
        if let Some(after) = rest.strip_prefix("json\n") {
            rest = after;
            continue;
        }
        return None;
    }
}

/// Longest text after the object that may be a wrapper's end (closing tags, a fence, a short
/// sentence). Bounding it keeps a bare value full of `}` linear: each `}` asks this again.
pub const MAX_SUFFIX_LEN: usize = 512;

/// Whether `text` (everything after the object) is a recognized wrapper's end. A closing tag
/// that names a tool must name this one, as an opening tag must (`</invoke name="rm">` after a
/// call to another tool may be the end of an `rm` call).
pub fn suffix(text: &str, opened: Opened, tool: Option<&str>) -> bool {
    if text.len() > MAX_SUFFIX_LEN {
        return false;
    }
    let mut rest = text;
    let mut paren = opened.paren;
    let mut fence = opened.fence;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return true;
        }
        if let Some(after) = DEEPSEEK_ENDS.iter().find_map(|token| rest.strip_prefix(token)) {
            rest = after;
            continue;
        }
        // DeepSeek V3 closes its fence right before its end token: ```` ```<｜tool▁call▁end｜> ````.
        let fence_then_end =
            rest.strip_prefix("```").filter(|after| DEEPSEEK_ENDS.iter().any(|t| after.starts_with(t)));
        if let (true, Some(after)) = (fence, fence_then_end) {
            fence = false;
            rest = after;
            continue;
        }
        // After the object only closing tags: an opening one (`<parameter …>`) starts more of
        // the call.
        if let Some(after) = tool_tag(rest).filter(|_| rest.starts_with("</") || is_end_token(rest)) {
            let token = &rest[..rest.len() - after.len()];
            if !named_tool(token).is_none_or(|name| names_this_tool(name, tool))
                || !call_name::tag_names_this_tool(token, tool)
            {
                return false;
            }
            rest = after;
        } else if let (true, Some(after)) = (paren, rest.strip_prefix(')')) {
            paren = false;
            rest = after;
        } else if let (true, Some(len)) = (fence, lexeme::fence_len(rest)) {
            // A closing fence is bare; what follows it is outside the fenced call.
            if rest[3..len].trim().is_empty() {
                rest = &rest[len..];
                let after = rest.trim();
                return after.is_empty() || is_sentence(after, opened);
            }
            return false;
        } else if let Some(len) = lexeme::comment_len(rest) {
            // A comment after the object: dropped only as the words of a closing sentence.
            let words = comment_words(&rest[..len]);
            if !words.is_empty() && !ends_the_lead_in(words.trim_end_matches(['.', '!']), opened) {
                return false;
            }
            rest = &rest[len..];
        } else {
            // A closing sentence, and nothing after it.
            return is_sentence(rest.trim_end(), opened);
        }
    }
}

/// The longest chat-template header read before a call's arguments.
const MAX_HEADER: usize = 256;

/// gpt-oss's harmony header before a call's arguments, `<|start|>assistant<|channel|>commentary
/// to=functions.NAME <|constrain|>json<|message|>` (its words in either order, the start and
/// the constraint optional), naming one recipient: the tool it names and the text after it.
fn harmony_header(text: &str) -> Option<(&str, &str)> {
    let text = past_harmony_analysis(text);
    let (header, after) = text.split_once("<|message|>")?;
    if header.len() > MAX_HEADER {
        return None;
    }
    let mut recipient = None;
    let mut rest = header;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        if let Some(after) = ["<|start|>", "<|channel|>", "<|constrain|>"].iter().find_map(|t| rest.strip_prefix(t)) {
            rest = after;
            continue;
        }
        let end = rest.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(rest.len());
        let word = &rest[..end];
        match word.strip_prefix("to=") {
            // Two recipients: which call is this?
            Some(_) if recipient.is_some() => return None,
            Some(name) => recipient = Some(name.strip_prefix("functions.").unwrap_or(name)),
            // The role, the channel and the constraint's format, nothing else.
            None if matches!(word, "assistant" | "commentary" | "analysis" | "json") => {}
            None => return None,
        }
        rest = &rest[end..];
    }
    recipient.filter(|name| !name.is_empty()).map(|name| (name, after))
}

/// The text after a whole harmony analysis message before the call
/// (`<|channel|>analysis<|message|>…<|end|>`: the model's reasoning, no part of the call).
fn past_harmony_analysis(text: &str) -> &str {
    let start = text.trim_start();
    let start = start.strip_prefix("<|start|>assistant").unwrap_or(start);
    start
        .strip_prefix("<|channel|>analysis<|message|>")
        .and_then(|rest| rest.split_once("<|end|>"))
        .map_or(text, |(_, after)| after)
}

const DEEPSEEK_CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const DEEPSEEK_CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const DEEPSEEK_SEP: &str = "<｜tool▁sep｜>";
/// DeepSeek's tokens that end a call, the calls, or the turn.
const DEEPSEEK_ENDS: [&str; 3] = ["<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "<｜end▁of▁sentence｜>"];

/// DeepSeek's native call header: V3's `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME` (a
/// ```` ```json ```` fence follows) or V3.1's `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>`, after
/// an optional `<｜tool▁calls▁begin｜>`: the tool it names and the text after it.
fn deepseek_header(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix(DEEPSEEK_CALLS_BEGIN).unwrap_or(text).trim_start();
    let (before, after) = rest.strip_prefix(DEEPSEEK_CALL_BEGIN)?.split_once(DEEPSEEK_SEP)?;
    let name_len = |text: &str| text.bytes().take_while(|b| b.is_ascii_alphanumeric() || b"_-.".contains(b)).count();
    if before == "function" {
        let len = name_len(after);
        return (len > 0).then(|| (&after[..len], &after[len..]));
    }
    (!before.is_empty() && name_len(before) == before.len()).then_some((before, after))
}

/// Words that name no tool in particular (`tool{…}`, `call(…)`).
const GENERIC_NAMES: [&str; 6] = ["tool", "function", "call", "invoke", "tool_call", "tool_use"];

/// Whether a call syntax's `name` may be this tool: its own name, the short name of an MCP tool
/// (`search` for `mcp__search__search`), a generic word, or any name where the tool is unknown.
pub(crate) fn names_this_tool(name: &str, tool: Option<&str>) -> bool {
    let Some(tool) = tool else {
        return true;
    };
    name == tool || mcp_short_name(tool) == Some(name) || GENERIC_NAMES.contains(&name.to_ascii_lowercase().as_str())
}

/// The tool's own name within an MCP tool's `mcp__<server>__<tool>` (none for other names,
/// `my__search` included).
pub(crate) fn mcp_short_name(tool: &str) -> Option<&str> {
    tool.strip_prefix("mcp__")?.rsplit_once("__").map(|(_, short)| short).filter(|short| !short.is_empty())
}

/// The tool a wrapper token names: `<invoke name="X">`, `<function=X>`, `functions.X:0`,
/// `[TOOL_CALLS]X`.
fn named_tool(token: &str) -> Option<&str> {
    if let Some(glued) = token.strip_prefix(MISTRAL_CALLS) {
        let name = &glued[..lexeme::identifier_len(glued).unwrap_or(0)];
        return (!name.is_empty()).then_some(name);
    }
    if let Some(rest) = token.strip_prefix('<') {
        let rest = rest.trim_start_matches(['/', '|']);
        if let Some(at) = rest.find("name=\"") {
            let value = &rest[at + 6..];
            return value.find('"').map(|end| &value[..end]);
        }
        let (_, value) = rest.split_once('=')?;
        return Some(value.trim_end_matches(['>', '|']).trim_matches(['"', '\'']));
    }
    let (call, _) = token.rsplit_once(':')?;
    Some(call.rsplit_once('.').map_or(call, |(_, name)| name))
}

/// Mistral's marker before its calls, the tool's name glued to it.
const MISTRAL_CALLS: &str = "[TOOL_CALLS]";

/// The tokens of call syntaxes that are not tags: a call id (`functions.search:0`, Kimi's) and
/// bracketed markers (`[TOOL_CALLS]`, `[ARGS]`, Mistral's). The text after it.
fn call_token(text: &str) -> Option<&str> {
    if let Some(after) = text.strip_prefix(MISTRAL_CALLS) {
        // `[TOOL_CALLS]Bash[ARGS]{…}`, `[TOOL_CALLS]Bash{…}`: the tool's name glued to the marker;
        // `[TOOL_CALLS] [{…}]`: a list of calls (a second one is text after the first).
        let name = lexeme::identifier_len(after).unwrap_or(0);
        let list = after.trim_start().strip_prefix('[').filter(|_| name == 0);
        return Some(list.unwrap_or(&after[name..]));
    }
    if let Some(after) = text.strip_prefix("[CALL_ID]") {
        // `[CALL_ID]a1b2c3d4e[ARGS]`: Mistral's call id, nine letters and digits with a digit
        // among them; a word there (`[CALL_ID]Write[ARGS]`) may be a tool's name, and stays.
        let id = after.get(..9).filter(|id| {
            id.bytes().all(|b| b.is_ascii_alphanumeric())
                && id.bytes().any(|b| b.is_ascii_digit())
                && after[9..].starts_with("[ARGS]")
        });
        return Some(id.map_or(after, |id| &after[id.len()..]));
    }
    if let Some(after) = text.strip_prefix("[ARGS]") {
        return Some(after);
    }
    let end = text.find(|c: char| c.is_whitespace() || c == '<' || c == '{').unwrap_or(text.len());
    let (name, index) = text[..end].rsplit_once(':')?;
    let is_name = lexeme::identifier_len(name) == Some(name.len());
    (is_name && !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit())).then(|| &text[end..])
}

/// `<|tool_call_end|>`, `<|python_end|>`, `<|eot_id|>`: a known special token that ends a call.
fn is_end_token(text: &str) -> bool {
    text.strip_prefix("<|").and_then(|t| t.split_once("|>")).is_some_and(|(token, _)| call_name::is_ending_token(token))
}

/// Whether every closing tag in `rest` closes a tag opened in `prefix`, by the same name.
pub fn closes_opened(prefix: &str, rest: &str) -> bool {
    rest.match_indices("</").all(|(at, _)| {
        let name = rest[at + 2..].split(|c: char| c == '>' || c.is_whitespace()).next().unwrap_or_default();
        !name.is_empty()
            && prefix
                .match_indices(&format!("<{name}"))
                .any(|(open, _)| prefix[open + 1 + name.len()..].starts_with(|c: char| c == '>' || c.is_whitespace()))
    })
}

/// `<tag …>` or `</tag>` or `<|token|>` of a tool-call syntax: the text after it.
fn tool_tag(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('<')?;
    let close = inner.find('>')?;
    let tag = &inner[..close];
    if tag.contains(['<', '{', '}', '\n']) {
        return None;
    }
    let after = &inner[close + 1..];
    // `<|python_start|>` and its kind: a chat template's special token, if it is a known one;
    // any other (`<|do_not_execute|>`, `<|example|>`) may say how the call is meant.
    if let Some(token) = tag.strip_prefix('|').and_then(|t| t.strip_suffix('|')) {
        if lexeme::identifier_len(token) == Some(token.len()) || token.starts_with('/') {
            return call_name::is_call_token(token).then_some(after);
        }
    }
    // Only a call syntax's own tag names, whole: `<tool_dry_run>`, `<function_example>` are text.
    call_name::is_call_tag(tag).then_some(after)
}

fn trailing_identifier(text: &str) -> &str {
    let start = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .last()
        .map_or(text.len(), |(i, _)| i);
    let word = &text[start..];
    match lexeme::identifier_len(word) {
        Some(len) if len == word.len() && (start == 0 || text[..start].ends_with(char::is_whitespace)) => word,
        _ => "",
    }
}

/// Words and the punctuation of sentences: no quotes, brackets, paths, flags or shell operators.
fn is_prose(text: &str) -> bool {
    !text.is_empty()
        && text.chars().any(char::is_alphabetic)
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c.is_whitespace() || matches!(c, ',' | '.' | ':' | '!' | '?' | '\'' | '’'))
}

/// The words a lead-in that only presents the call is made of (`Here is the call:`, `Running:`,
/// `Sure, I'll use the tool now:`). A word outside them may say where, as whom or how the call
/// is meant (`sudo:`, `In the staging repo, run:`): such a lead-in is not dropped.
const LEAD_IN_WORDS: [&str; 56] = [
    "here",
    "heres",
    "is",
    "are",
    "the",
    "a",
    "an",
    "my",
    "this",
    "that",
    "following",
    "below",
    "call",
    "calling",
    "tool",
    "function",
    "input",
    "arguments",
    "args",
    "parameters",
    "params",
    "json",
    "command",
    "request",
    "i",
    "ill",
    "im",
    "will",
    "am",
    "going",
    "let",
    "me",
    "lets",
    "now",
    "run",
    "running",
    "execute",
    "executing",
    "invoke",
    "invoking",
    "use",
    "using",
    "with",
    "to",
    "it",
    "okay",
    "ok",
    "sure",
    "next",
    "for",
    "of",
    "doing",
    "done",
    "please",
    "thanks",
    "there",
];

/// Prose made only of presentation words (and the tool's own name, or words of it).
fn is_lead_in(text: &str, tool: Option<&str>) -> bool {
    is_prose(text)
        && text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '\'' | '’' | '_'))).filter(|w| !w.is_empty()).all(
            |word| {
                let plain: String = word.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect();
                LEAD_IN_WORDS.contains(&plain.as_str()) || tool.is_some_and(|tool| names_a_part_of(tool, word))
            },
        )
}

/// Whether `word` is the tool, in any case, or a word of its name (`weather` or `forecast` of
/// `mcp__weather__forecast`, `read` of `Read`): the call named in prose.
fn names_a_part_of(tool: &str, word: &str) -> bool {
    names_this_tool(word, Some(tool))
        || tool.trim_start_matches("mcp__").split('_').any(|part| !part.is_empty() && part.eq_ignore_ascii_case(word))
}

/// A closing sentence: prose ending with '.', '!' or '?' made only of presentation words
/// (`Done.`, `That is the call.`). Anything else after the call may qualify it (`Do not run
/// this yet.`, `Replace all occurrences.`) or be an argument that slipped out (`… main.`).
fn is_sentence(text: &str, opened: Opened) -> bool {
    let body = text.trim_end_matches(['.', '!']);
    text.ends_with(['.', '!']) && body.len() < text.len() && ends_the_lead_in(body, opened)
}

/// Whether `body` (a sentence without its final `.` or `!`) may end the sentence a lead-in
/// began (`Running: {…} now.`): after a bare call, words are as likely arguments that slipped
/// out (`… now please.`); a question is never an end.
fn ends_the_lead_in(body: &str, opened: Opened) -> bool {
    let mut words = body.split_whitespace();
    let one_word = words.next().is_some() && words.next().is_none();
    let plain = body.trim().to_lowercase();
    opened.lead_in
        && !body.contains([':', '?'])
        && is_lead_in(body, None)
        && (!one_word || ONE_WORD_ENDS.contains(&plain.as_str()))
}

/// The words of a comment, without its markers.
fn comment_words(comment: &str) -> &str {
    let body = comment.strip_prefix("//").unwrap_or(comment);
    let body = body.strip_prefix("/*").and_then(|b| b.strip_suffix("*/")).unwrap_or(body);
    body.trim()
}

/// The one-word ends of a lead-in's sentence (`Running: {…} now.`); any other word alone (`run.`)
/// may be an argument that slipped out.
const ONE_WORD_ENDS: [&str; 3] = ["now", "please", "thanks"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_that_are_wrappers_and_prefixes_that_may_belong_to_the_call() {
        let fence = Opened { fence: true, ..Opened::default() };
        let table: [(&str, Option<Opened>); 18] = [
            ("", Some(Opened::default())),
            ("```json\n", Some(fence)),
            ("Here is the call:\n```json\n", Some(Opened { lead_in: true, ..fence })),
            ("Running: ", Some(Opened { lead_in: true, ..Opened::default() })),
            ("tool", Some(Opened::default())),
            ("search(", Some(Opened { paren: true, ..Opened::default() })),
            ("<invoke name=\"Bash\">\n", Some(Opened::default())),
            ("<|tool_call_begin|>", Some(Opened::default())),
            ("cd /tmp && ", None),
            ("cd tmp ", None),
            ("rm -rf ", None),
            ("echo $(", None),
            ("<b>", None),
            ("x = ", None),
            ("sudo: ", None),
            ("As root: ", None),
            ("In the staging repo, run: ", None),
            ("Sure, here is the call:\n", Some(Opened { lead_in: true, ..Opened::default() })),
        ];
        for (text, expected) in table {
            assert_eq!(prefix(text, None), expected, "{text:?}");
        }
    }

    #[test]
    fn chat_template_headers_name_one_tool() {
        let harmony = "<|start|>assistant<|channel|>commentary to=functions.Bash <|constrain|>json<|message|>";
        assert_eq!(harmony_header(harmony), Some(("Bash", "")));
        assert_eq!(harmony_header("to=Bash <|message|>"), Some(("Bash", "")));
        for text in [
            "<|channel|>commentary to=functions.Bash to=functions.Read<|message|>",
            "<|channel|>commentary to=functions.Bash please<|message|>",
            "<|channel|>commentary<|message|>",
            "<|channel|>commentary to=functions.Bash",
        ] {
            assert_eq!(harmony_header(text), None, "{text:?}");
        }
        let v3 = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>Bash\n```json\n";
        assert_eq!(deepseek_header(v3), Some(("Bash", "\n```json\n")));
        assert_eq!(deepseek_header("<｜tool▁call▁begin｜>Bash<｜tool▁sep｜>"), Some(("Bash", "")));
        assert_eq!(deepseek_header("<｜tool▁call▁begin｜>Bash now<｜tool▁sep｜>"), None);
        assert_eq!(prefix(v3, Some("Read")), None);
    }

    #[test]
    fn only_whole_tag_and_token_names_of_call_syntaxes_are_wrappers() {
        for text in [
            "<tool_dry_run>\n",
            "<function_example>",
            "<invoke_dry_run name=\"x\">",
            "<|do_not_execute|>",
            "<x:invoke>",
        ] {
            assert_eq!(prefix(text, None), None, "{text:?}");
        }
        for text in ["<tool_call>\n", "<minimax:tool_call>", "<|python_tag|>", "<|tool_call|>", "<function_calls>\n"] {
            assert_eq!(prefix(text, None), Some(Opened::default()), "{text:?}");
        }
        assert!(!suffix("<|pending|>", Opened::default(), None));
        assert!(suffix("<|eot_id|>", Opened::default(), None));
    }

    #[test]
    fn a_comment_outside_the_object_is_dropped_only_as_a_lead_in_or_closing_words() {
        assert_eq!(prefix("// call\n", None), Some(Opened::default()));
        assert_eq!(prefix("/* Here is the call: */ ", None), Some(Opened::default()));
        assert_eq!(prefix("/* as root: */ ", None), None);
        assert_eq!(prefix("// staging only\n", None), None);
        let lead_in = Opened { lead_in: true, ..Opened::default() };
        assert!(suffix(" // now", lead_in, None));
        assert!(!suffix(" // now", Opened::default(), None));
        assert!(!suffix(" // do not run this yet", lead_in, None));
    }

    #[test]
    fn a_wrapper_that_names_another_tool_is_not_this_call() {
        let glob = Some("Glob");
        assert!(prefix("Glob(", glob).is_some());
        assert!(prefix("tool", glob).is_some());
        assert!(prefix("<invoke name=\"Glob\">\n", glob).is_some());
        assert!(prefix("search", Some("mcp__search__search")).is_some());
        for text in ["Grep(", "<invoke name=\"Grep\">", "<function=Grep>", "functions.Grep:0 "] {
            assert_eq!(prefix(text, glob), None, "{text:?}");
        }
        assert!(prefix("[TOOL_CALLS]Glob[CALL_ID]a1b2c3d4e[ARGS]", glob).is_some());
        for text in ["[TOOL_CALLS]Glob[CALL_ID]Grep[ARGS]", "[TOOL_CALLS]Glob[CALL_ID]GrepFiles[ARGS]"] {
            assert_eq!(prefix(text, glob), None, "{text:?}");
        }
    }

    #[test]
    fn suffixes_that_close_a_wrapper_and_suffixes_that_may_belong_to_the_call() {
        let fenced = Opened { fence: true, ..Opened::default() };
        let table: [(&str, Opened, bool); 20] = [
            ("", Opened::default(), true),
            ("\n```", fenced, true),
            ("\n```\nThat lists the files.", fenced, false),
            ("\n```\nThat is the call.", fenced, false),
            ("\n```\nThat is the call.", Opened { lead_in: true, ..fenced }, true),
            (" now.", Opened { lead_in: true, ..Opened::default() }, true),
            (" now.", Opened::default(), false),
            (" main.", Opened::default(), false),
            (" and main.", Opened::default(), false),
            (" Do not run this yet.", Opened::default(), false),
            ("</parameter>\n</invoke>", Opened::default(), true),
            ("</invoke name=\"list_dir\">", Opened::default(), true),
            ("</invoke name=\"delete_dir\">", Opened::default(), false),
            ("</function=rm>", Opened::default(), false),
            ("</tool_call name=rm>", Opened::default(), false),
            (")", Opened { paren: true, ..Opened::default() }, true),
            (" --force", Opened::default(), false),
            (" origin main", Opened::default(), false),
            (")", Opened::default(), false),
            ("\n```", Opened::default(), false),
        ];
        for (text, opened, expected) in table {
            assert_eq!(suffix(text, opened, Some("list_dir")), expected, "{text:?}");
        }
    }
}
