//! The grammar's terminals (grammars/tool-input.ebnf), as `nom` parsers over `&str`.
//! Each returns how many bytes it matched, so callers keep byte offsets into the raw input.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_until, take_while, take_while1};
use nom::character::complete::{char, one_of, satisfy};
use nom::combinator::{opt, recognize};
use nom::sequence::pair;
use nom::{IResult, Parser};

type Lex<'a> = IResult<&'a str, &'a str>;

/// `number = "-"? ("0" | [1-9][0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?`
fn number(input: &str) -> Lex<'_> {
    // `take_while` rather than `digit0`: the latter stops one digit short at the end of input.
    let digits = || take_while(|c: char| c.is_ascii_digit());
    let digits1 = || take_while1(|c: char| c.is_ascii_digit());
    recognize((
        opt(char('-')),
        alt((tag("0"), recognize(pair(one_of("123456789"), digits())))),
        opt(pair(char('.'), digits1())),
        opt((one_of("eE"), opt(one_of("+-")), digits1())),
    ))
    .parse(input)
}

/// `literal = "true" | "false" | "null"`
fn literal(input: &str) -> Lex<'_> {
    alt((tag("true"), tag("false"), tag("null"))).parse(input)
}

/// `identifier = [A-Za-z_$] [A-Za-z0-9_$.-]*` (unquoted keys and bare words)
fn identifier(input: &str) -> Lex<'_> {
    recognize(pair(
        satisfy(|c| c.is_alphabetic() || c == '_' || c == '$'),
        take_while(|c: char| c.is_alphanumeric() || matches!(c, '_' | '$' | '-' | '.')),
    ))
    .parse(input)
}

/// `comment = "//" [^\n]* | "/*" ... "*/"`
fn comment(input: &str) -> Lex<'_> {
    alt((recognize(pair(tag("//"), take_while(|c| c != '\n'))), recognize((tag("/*"), take_until("*/"), tag("*/")))))
        .parse(input)
}

/// `ws = ([ \t\r\n] | unicode_space)+`
fn whitespace(input: &str) -> Lex<'_> {
    take_while1(|c: char| matches!(c, ' ' | '\t' | '\r' | '\n') || is_unicode_space(c)).parse(input)
}

/// Spaces outside ASCII that models emit between tokens (JSON5 allows them too).
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200b}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}' | '\u{180e}'
    )
}

/// `literal_escape = "\\" ("n" | "r" | "t")`: an escape written out where only whitespace fits.
fn literal_escape(input: &str) -> Lex<'_> {
    recognize(pair(char('\\'), one_of("nrt"))).parse(input)
}

/// `fence = "```" [^\n]*`
fn fence(input: &str) -> Lex<'_> {
    recognize(pair(tag("```"), take_while(|c| c != '\n'))).parse(input)
}

fn matched(result: Lex<'_>) -> Option<usize> {
    result.ok().map(|(_, token)| token.len())
}

pub fn number_len(input: &str) -> Option<usize> {
    matched(number(input))
}

/// `text` as a JSON number keeping its exact text (`1e3` stays `1e3`), if it is one whole.
pub fn json_number(text: &str) -> Option<serde_json::Number> {
    (number_len(text) == Some(text.len())).then(|| serde_json::Number::from_string_unchecked(text.to_string()))
}

pub fn literal_len(input: &str) -> Option<usize> {
    matched(literal(input))
}

pub fn identifier_len(input: &str) -> Option<usize> {
    matched(identifier(input))
}

pub fn comment_len(input: &str) -> Option<usize> {
    matched(comment(input))
}

pub fn whitespace_len(input: &str) -> Option<usize> {
    matched(whitespace(input))
}

pub fn literal_escape_len(input: &str) -> Option<usize> {
    matched(literal_escape(input))
}

pub fn fence_len(input: &str) -> Option<usize> {
    matched(fence(input))
}

/// Whether a comma in `text` stands between two digits (`1,000`, `3,5`): a numeral's own
/// thousands or decimal comma, where a list would read it as a separator.
pub fn digit_comma_digit(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b',', bytes)
        .any(|at| at > 0 && bytes[at - 1].is_ascii_digit() && bytes.get(at + 1).is_some_and(u8::is_ascii_digit))
}

/// Whether the byte before `at` ends a drive letter (`C:` at a word start): a backslash at
/// `at` is a Windows path's.
pub fn after_drive_letter(bytes: &[u8], at: usize) -> bool {
    at >= 2
        && bytes[at - 1] == b':'
        && bytes[at - 2].is_ascii_alphabetic()
        && (at < 3 || !bytes[at - 3].is_ascii_alphanumeric())
}

/// Where a letter escape (`\n`, `\t`, `\r` before a letter or digit) stands, for whether it
/// may be a path's backslash.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EscapeSpot {
    /// After a letter, a digit or a path's sign: `src\tests`, `..\tests`, `~\notes`, `%CD%\x`.
    InsideWord,
    /// After a space: `cd \tests`, `cd \nginx` — a path from the drive's root; a line break or
    /// tab right after a space is rarely meant.
    AfterBlank,
    /// After a sign a path starts after (`=`, a quote, `(`): `set P=\tests`, `dir "\tests"`; a
    /// line break there ends a line of code (`print('x')\nfoo`, `<<'EOF'\nimport`).
    AfterOpener,
    /// At the string's start: `"\tests"`, `"\notes.txt"`.
    AtStart,
}

/// Where the escape at `at` in `bytes` stands, given `decoded`, the string's text read before
/// it; `None` unless it is `\n`, `\t` or `\r` before a letter or digit in one of those spots.
pub fn escape_spot(decoded: &str, bytes: &[u8], at: usize) -> Option<EscapeSpot> {
    if !matches!(bytes.get(at + 1), Some(b'n' | b't' | b'r')) || !text_starts_with_word(&bytes[at + 2..]) {
        return None;
    }
    spot_after(decoded.chars().next_back())
}

/// The spot of an escape after `before` (`None`: the string's start).
pub fn spot_after(before: Option<char>) -> Option<EscapeSpot> {
    match before {
        None => Some(EscapeSpot::AtStart),
        Some(c) if c.is_alphanumeric() || PATH_SIGNS.contains(&c) => Some(EscapeSpot::InsideWord),
        Some(' ') => Some(EscapeSpot::AfterBlank),
        Some('=' | '"' | '\'' | '(') => Some(EscapeSpot::AfterOpener),
        Some(_) => None,
    }
}

/// `null`, `None`, `undefined`, `nil` in any case: JSON's, Python's, JavaScript's and Go's or
/// Ruby's word for no value.
pub fn is_null_word(text: &str) -> bool {
    ["null", "none", "undefined", "nil"].iter().any(|word| text.eq_ignore_ascii_case(word))
}

/// Signs a path's parts end in before a backslash.
pub const PATH_SIGNS: [char; 6] = ['.', '~', '%', '}', ')', '$'];

/// Whether `bytes` starts with a letter or digit (of any script).
pub fn text_starts_with_word(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4)];
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&head[..error.valid_up_to()]).unwrap_or_default(),
    };
    text.chars().next().is_some_and(char::is_alphanumeric)
}

/// Of letter escapes in `text` (each at its offset, with the escape's letter and its spot, in
/// order), the first that may be a path's backslash: after a space any of them (`cd \nginx`),
/// but a `\n` in text `over_lines` (another line break in it) only as inside a word;
/// inside a word or after a path's opening sign a `\t` or `\r` (`cd src\tests`), or a `\n` in a
/// word whose rest names a file (a `.` before a letter: `docs\new\readme.txt`,
/// `src\notes.md:12`) or that keeps a backslash of its own (`C:\\x\new`) — `line1\nline2` is
/// two lines; at the string's start one in a word that names a file or is the whole string
/// (`"\tests"`; `"\treturn nil"` is Go's indented line). A word runs between blanks, as
/// `blank` tells them; a backslash of its own is `kept` (`\\\\` as written in JSON, `\\`
/// once decoded). Each word is read once.
pub fn path_like_escape(
    text: &str,
    escapes: impl Iterator<Item = (usize, u8, EscapeSpot)>,
    blank: impl Fn(u8) -> bool,
    kept: &[u8],
    over_lines: bool,
) -> Option<usize> {
    let bytes = text.as_bytes();
    // The end of the word read last, and whether the rest of it from its first escape names a
    // file or holds another backslash.
    let mut word: Option<(usize, bool)> = None;
    for (at, letter, spot) in escapes {
        match spot {
            // In text over lines (SQL's `name \nFROM`, markdown's hard break) a line break after a
            // space may be one: asked as inside a word.
            EscapeSpot::AfterBlank if letter != b'n' || !over_lines => return Some(at),
            EscapeSpot::InsideWord | EscapeSpot::AfterOpener if letter != b'n' => return Some(at),
            EscapeSpot::AtStart if letter == b'r' || !bytes.iter().any(|&b| blank(b)) => return Some(at),
            _ => {}
        }
        let named = match word {
            Some((end, named)) if at < end => named,
            _ => {
                let start = bytes[..at].iter().rposition(|&b| blank(b)).map_or(0, |n| n + 1);
                let end = bytes[at..].iter().position(|&b| blank(b)).map_or(bytes.len(), |n| at + n);
                let rest = &bytes[(at + 2).min(end)..end];
                // A backslash the text keeps (`\\\\` written, or one a decoding left) beside it.
                let kept_backslash = |part: &[u8]| part.windows(kept.len()).any(|w| w == kept);
                let named = kept_backslash(&bytes[start..at])
                    || kept_backslash(rest)
                    || rest.windows(2).any(|w| w[0] == b'.' && w[1].is_ascii_alphabetic());
                word = Some((end, named));
                named
            }
        };
        if named {
            return Some(at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_like_escape_is_a_tab_or_cr_or_a_break_in_a_file_name() {
        let raw_blank = |b: u8| matches!(b, b' ' | b'\t' | b'\n');
        let first = |text: &str| {
            let bytes = text.as_bytes();
            let escapes = memchr::memchr_iter(b'\\', bytes)
                .filter_map(|at| escape_spot(&text[..at], bytes, at).map(|spot| (at, bytes[at + 1], spot)));
            path_like_escape(text, escapes, raw_blank, b"\\\\", text.matches("\\n").count() > 1)
        };
        assert_eq!(first("cd src\\tests"), Some(6));
        assert_eq!(first("type docs\\new\\readme.txt now"), Some(9));
        assert_eq!(first("cat 'a\\nb.md'"), Some(6), "quotes after the name");
        assert_eq!(first("type src\\notes.md:12"), Some(8), "a line number after the name");
        assert_eq!(first("printf line1\\nline2.txt"), Some(12));
        assert_eq!(first("printf line1\\nline2 x.txt"), None, "the name is another word");
        assert_eq!(first("printf line1\\nline2"), None);
        assert_eq!(first("dir C:\\\\x\\new"), Some(9), "a word with a backslash of its own");
        assert_eq!(first("cd \\nginx"), Some(3), "a line break right after a space");
        assert_eq!(first("set P=\\tests"), Some(6));
        assert_eq!(first("\\tests"), Some(0), "the whole string one word");
        assert_eq!(first("\\notes.txt now"), Some(0), "a file's name at the start");
        assert_eq!(first("\\treturn nil"), None, "an indented line at the start");
        assert_eq!(first("SELECT id \\nFROM t \\nWHERE x"), None, "text over lines");
        assert_eq!(first("SELECT id \\nFROM t \\nWHERE x \\tAND y"), Some(29), "a tab after a space");
    }

    #[test]
    fn a_comma_between_digits_is_a_numerals() {
        for text in ["1,000", "$1,000,000 SEK", "lat 3,5"] {
            assert!(digit_comma_digit(text), "{text}");
        }
        for text in ["a,b", "1, 000", "1,", ",5", "x 1 ,2"] {
            assert!(!digit_comma_digit(text), "{text}");
        }
    }

    #[test]
    fn terminals_match_what_the_grammar_says() {
        type Lexer = fn(&str) -> Option<usize>;
        let table: [(Lexer, &str, Option<usize>); 16] = [
            (number_len, "-12.5e+3,", Some(8)),
            (number_len, "5000", Some(4)),
            (number_len, "1.25e3", Some(6)),
            (number_len, "0123", Some(1)),
            (number_len, "+1", None),
            (number_len, ".5", None),
            (literal_len, "nullx", Some(4)),
            (literal_len, "True", None),
            (identifier_len, "cmd: 1", Some(3)),
            (identifier_len, "x-y.z ", Some(5)),
            (identifier_len, "9a", None),
            (comment_len, "/* a */ b", Some(7)),
            (comment_len, "// a\nb", Some(4)),
            (comment_len, "/* open", None),
            (whitespace_len, " \n\tx", Some(3)),
            (fence_len, "```json\n{", Some(7)),
        ];
        for (lexer, input, expected) in table {
            assert_eq!(lexer(input), expected, "{input:?}");
        }
    }
}
