//! The tags of the foreign call syntaxes, read in one place. The parser, the guard against the
//! syntax's own tags inside a value and the check for tags leaked into a JSON string all see a
//! tag as [`tag_at`] does, in every spelling models write: `<parameter …>`, `<|parameter …|>`,
//! `<｜DSML｜parameter …>`, `<antml:parameter …>`, `<minimax:parameter …>` and the like are one tag. A guard that knew
//! fewer spellings than the parser would let a decorated tag through as a value's text.

use super::super::call_name;
use super::super::outcome::{Refusal, RefusalCode};
use std::ops::Range;

/// One tag: `<name …>` or `</name>`, with the text of its attributes.
#[derive(Debug)]
pub struct Tag<'a> {
    pub span: Range<usize>,
    pub closing: bool,
    pub name: &'a str,
    pub attributes: &'a str,
}

/// The tag starting at `start` (a `<`), its name normalized by [`head`].
pub fn tag_at(raw: &str, start: usize) -> Option<Tag<'_>> {
    // A tag ends before the next `<` or line break: the search stops there, so the text after
    // one `<` is never searched again for the next one (linear over the whole input).
    let after = &raw.as_bytes()[start + 1..];
    let close = memchr::memchr3(b'>', b'<', b'\n', after).filter(|&i| after[i] == b'>')? + start + 1;
    let (closing, name, attributes) = head(&raw[start + 1..close]);
    Some(Tag { span: start..close + 1, closing, name, attributes })
}

/// A tag's text after its `<`: whether it closes, its name and its attributes. `/` and the
/// `|`, `｜DSML｜` or `namespace:` decorations some models add are dropped.
fn head(inner: &str) -> (bool, &str, &str) {
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let inner = inner.trim_start_matches(['|', '｜']);
    let inner = inner.strip_prefix("DSML").map_or(inner, |rest| rest.trim_start_matches(['|', '｜']));
    let name_end = inner.find(|c: char| c.is_whitespace() || c == '=' || c == '|').unwrap_or(inner.len());
    (closing, call_name::local_name(&inner[..name_end]), &inner[name_end..])
}

/// The tags of the syntax (whole, or with their `>` lost) starting at each `<` of `text`: where
/// it starts, whether it closes, its name in lower case and where it ends. Blanks after `<` and
/// `/` and the name's case are dropped (`</ Parameter >`): a guard reads a tag more loosely
/// than the parser, never less. Each is read up to the next `<`, `>` or line break (linear).
pub fn heads(text: &str) -> impl Iterator<Item = Head<'_>> + '_ {
    memchr::memchr_iter(b'<', text.as_bytes()).map(move |at| {
        let rest = &text[at + 1..];
        let end = rest.find(['<', '>', '\n']).unwrap_or(rest.len());
        let inner = rest[..end].trim_start();
        let (closing, inner) = match inner.strip_prefix('/') {
            Some(after) => (true, after.trim_start()),
            None => (false, inner),
        };
        let (_, name, attributes) = head(inner);
        let end = at + 1 + end + usize::from(rest[end..].starts_with('>'));
        Head {
            at,
            closing,
            name: name.to_ascii_lowercase(),
            exact: !name.contains(char::is_uppercase),
            attributes,
            end,
        }
    })
}

/// A tag as [`heads`] reads it.
pub struct Head<'a> {
    pub at: usize,
    pub closing: bool,
    pub name: String,
    /// Whether the name was written in lower case, as the syntax writes it.
    pub exact: bool,
    pub attributes: &'a str,
    /// Where the tag ends: after its `>`, or where it was cut.
    pub end: usize,
}

/// The key a parameter tag's attributes name, read as a wrapper's name is (see `call_name`):
/// `=K`, `name=K`, `NAME = "K"`, `name=“K”`, any quotes or none.
pub fn loose_parameter_name(attributes: &str) -> Option<String> {
    let text = attributes.trim().trim_end_matches(['/', '|', '｜']).trim_end();
    let value = match text.strip_prefix('=') {
        Some(value) => value,
        None => {
            let after = text.get(..4).filter(|key| key.eq_ignore_ascii_case("name")).map(|_| &text[4..])?;
            after.trim_start().strip_prefix('=')?
        }
    };
    let (name, _) = call_name::value_at(value.trim_start())?;
    (!name.is_empty()).then(|| name.to_string())
}

/// Whether `text` (a value) holds the syntax's own tags in any spelling: a parameter's or a
/// GLM key's or value's tag, a closing function or invoke, or a parameter's end whose `<` was
/// lost (`parameter>`, `parameter|>`). A closing tag was damaged, and where the value ends is
/// unknown. Another call syntax's markers (`</tool_call>`, `<|tool_call_begin|>`,
/// `[TOOL_CALLS]`) and a token that ends the turn with text after it (`<|im_end|>` and a user
/// turn) say the same: the value may end there, and what follows may be another call.
pub fn holds_call_tags(text: &str) -> bool {
    let tagged = heads(text).any(|tag| {
        let name = tag.name.as_str();
        // `List<Parameter>` in code: another case counts where the tag closes or names a key.
        let spelled = tag.closing || tag.exact || !tag.attributes.trim().is_empty();
        (spelled && name.starts_with("parameter"))
            || name.starts_with("arg_")
            || name.starts_with("tool_call")
            || (tag.closing && (name.starts_with("function") || name.starts_with("invoke")))
            || (text[tag.at..].starts_with("<|")
                && call_name::is_ending_token(name)
                && !text[tag.end..].trim().is_empty())
    });
    tagged
        || text.to_ascii_lowercase().contains("[tool_calls]")
        || ["parameter", "arg_key", "arg_value"].iter().any(|name| {
            text.match_indices(name)
                .any(|(at, _)| text[at + name.len()..].trim_start_matches(['|', '｜']).starts_with('>'))
        })
}

/// `name="K"`, `name='K'` or `=K` (the `<parameter=K>` form).
pub fn parameter_name(attributes: &str) -> Option<String> {
    if let Some(rest) = attributes.strip_prefix('=') {
        let name = rest.split_whitespace().next()?.trim_matches(['"', '\'']);
        return (!name.is_empty()).then(|| name.to_string());
    }
    let at = attributes
        .match_indices("name=")
        .find(|(i, _)| *i == 0 || attributes.as_bytes()[i - 1].is_ascii_whitespace())?
        .0;
    let rest = &attributes[at + 5..];
    match rest.chars().next() {
        Some(quote @ ('"' | '\'')) => {
            let body = &rest[1..];
            Some(body[..body.find(quote)?].to_string())
        }
        _ => unquoted_name(rest).map(|(name, _)| name.to_string()),
    }
}

/// The name of `name=command` written without quotes (HTML allows it, and some models write it
/// so): a word of name characters ending at a blank, the tag's end or `/`, and its length. Any
/// other character (`name=a"b`, `name=“k”`) is not such a name.
fn unquoted_name(rest: &str) -> Option<(&str, usize)> {
    let len = rest.find(|c: char| c.is_whitespace() || c == '/').unwrap_or(rest.len());
    let name = &rest[..len];
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':');
    (!name.is_empty() && name.chars().all(is_name_char)).then_some((name, len))
}

/// A parameter tag's attributes after the `=K` of the `<parameter=K>` form (all of them in the
/// `name="K"` form, whose name is checked with the rest).
pub fn extra_attributes(attributes: &str) -> &str {
    let rest = match attributes.strip_prefix('=') {
        Some(value) => {
            let value = value.trim_start();
            &value[value.find(char::is_whitespace).unwrap_or(value.len())..]
        }
        None => attributes,
    };
    rest.trim_start()
}

/// Attributes beside a tag's name: only `name="K"` naming `key` again, and DSML's `string=`
/// saying one thing. Anything else has two readings, which refuse: `unit="s"`,
/// `encoding="base64"` say how the value is meant (as written, or as the attribute says); a
/// second name (`<parameter name="old_string" name="new_string">`, `<parameter=K name="J">`,
/// `<arg_value name="J">` after `<arg_key>K`) says which key, and so does the first;
/// `string="false" string="true"` say the value is JSON and is text.
pub fn only_known_attributes(attributes: &str, key: &str, at: usize) -> Result<(), Refusal> {
    let mut rest = attributes.trim().trim_end_matches(['/', '|', '｜']).trim_end();
    let mut string = None;
    while !rest.is_empty() {
        let known = ["name=\"", "name='", "string=\"true\"", "string=\"false\""].iter().find(|k| rest.starts_with(**k));
        let len = match known {
            Some(k) if k.starts_with("name") => {
                let quote = &k[k.len() - 1..];
                let end = rest[k.len()..].find(quote);
                if end.is_some_and(|end| rest[k.len()..k.len() + end] != *key) {
                    return Err(ambiguous("a tag names two keys: either may be the one meant", at));
                }
                end.map(|end| k.len() + end + 1)
            }
            Some(k) => {
                if string.is_some_and(|said| said != *k) {
                    return Err(ambiguous("a tag says both string=\"true\" and string=\"false\"", at));
                }
                string = Some(*k);
                Some(k.len())
            }
            None => match rest.strip_prefix("name=").and_then(unquoted_name) {
                Some((name, _)) if name != key => {
                    return Err(ambiguous("a tag names two keys: either may be the one meant", at));
                }
                Some((_, len)) => Some("name=".len() + len),
                None => None,
            },
        };
        let Some(len) = len else {
            return Err(ambiguous(
                &format!("a tag's attribute besides the name ('{rest}'): the value as written, or as it says"),
                at,
            ));
        };
        rest = rest[len..].trim_start();
    }
    Ok(())
}

/// A closing tag's attributes (`</parameter=K>`, `</parameter name="K">`, `</arg_value
/// name="K">`): none, or the name of the key it closes. A closing tag naming another key says
/// where that key's value ends: the opening tag's key and the closing tag's are two readings,
/// as a wrapper's closing tag naming another tool is another call.
pub fn closes_key(attributes: &str, key: &str, at: usize) -> Result<(), Refusal> {
    let text = attributes.trim().trim_end_matches(['/', '|', '｜']).trim_end();
    if text.is_empty() {
        return Ok(());
    }
    match parameter_name(text) {
        Some(named) if named == key => only_known_attributes(extra_attributes(text), key, at),
        Some(named) => Err(ambiguous(&format!("a closing tag names '{named}', its opening tag '{key}'"), at)),
        None => Err(ambiguous(&format!("a closing tag's attributes do not read as its key's name ('{text}')"), at)),
    }
}

fn ambiguous(message: &str, at: usize) -> Refusal {
    Refusal::new(RefusalCode::Ambiguous, message, Some(at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_tag_reads_as_one() {
        for text in [
            "<parameter name=\"k\">",
            "<antml:parameter name=\"k\">",
            "<minimax:parameter name=\"k\">",
            "<｜DSML｜parameter name=\"k\" string=\"true\">",
            "<|parameter name=\"k\"|>",
        ] {
            let tag = tag_at(text, 0).unwrap();
            assert_eq!((tag.closing, tag.name), (false, "parameter"), "{text:?}");
            assert!(holds_call_tags(&format!("make deploy\n{text}")), "{text:?}");
        }
        for text in ["</｜DSML｜invoke>", "</invoke>", "</minimax:invoke>", "</|parameter|>", "x /parameter|>"] {
            assert!(holds_call_tags(text), "{text:?}");
        }
        for text in ["<div>", "a < b", "<function>", "<x:param>", "<invoker>"] {
            assert!(!holds_call_tags(text), "{text:?}");
        }
    }

    #[test]
    fn the_guard_reads_tags_in_any_case_or_spacing_and_other_syntaxes_markers() {
        for text in [
            "ls</Invoke>",
            "a</ parameter >\nb",
            "x</PARAMETER>",
            "x<Parameter name=\"k\">",
            "ls\n</tool_call>\n<tool_call>",
            "ls<|tool_call_end|>",
            "ls\n[TOOL_CALLS]Bash[ARGS]{}",
            "a<|im_end|>\n<|im_start|>user\nno",
        ] {
            assert!(holds_call_tags(text), "{text:?}");
        }
        assert!(!holds_call_tags("List<Parameter> ps;"));
        // An end token with nothing after it ends the value, not the turn inside it.
        assert!(!holds_call_tags("ls<|im_end|>\n"));
    }

    #[test]
    fn a_leaked_tag_names_its_key_in_any_spelling() {
        for attributes in [" name=k", " NAME=\"k\"", " name=“k”", " name = \"k\"", "=k", " name='k'"] {
            assert_eq!(loose_parameter_name(attributes).as_deref(), Some("k"), "{attributes:?}");
        }
    }

    #[test]
    fn a_parameter_name_may_go_unquoted_when_it_is_one_word() {
        assert_eq!(parameter_name(" name=command").as_deref(), Some("command"));
        assert_eq!(parameter_name(" name=file_path /").as_deref(), Some("file_path"));
        for attributes in [" name=a\"b", " name=“k”", " name="] {
            assert_eq!(parameter_name(attributes), None, "{attributes:?}");
        }
        assert!(only_known_attributes(" name=a", "a", 0).is_ok());
        for attributes in [" name=b", " name=a unit=s", " name=a name=b"] {
            assert!(only_known_attributes(attributes, "a", 0).is_err(), "{attributes:?}");
        }
        assert!(closes_key(" name=a", "a", 0).is_ok());
        assert!(closes_key(" name=b", "a", 0).is_err());
    }

    #[test]
    fn a_second_name_or_string_kind_refuses() {
        assert!(only_known_attributes(" name=\"a\" string=\"true\"", "a", 0).is_ok());
        assert!(only_known_attributes(" name=\"a\" name=\"a\"", "a", 0).is_ok());
        for attributes in [" name=\"a\" name=\"b\"", "name=\"b\"", " string=\"false\" string=\"true\"", " unit=\"s\""] {
            assert!(only_known_attributes(attributes, "a", 0).is_err(), "{attributes:?}");
        }
    }

    #[test]
    fn a_closing_tag_names_its_own_key_or_none() {
        for attributes in ["", "|", "=a", " name=\"a\"", " name='a'"] {
            assert!(closes_key(attributes, "a", 0).is_ok(), "{attributes:?}");
        }
        for attributes in ["=b", " name=\"b\"", " name=\"a\" name=\"b\"", " x"] {
            assert!(closes_key(attributes, "a", 0).is_err(), "{attributes:?}");
        }
    }
}
