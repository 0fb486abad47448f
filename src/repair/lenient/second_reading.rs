//! Text the lenient grammar reads one way although a second reading, which the parser does not
//! walk, is just as plausible: such text is refused as ambiguous, never handed on as the one
//! reading the parser found.

use super::parser::{FrameKind, Parser};
use super::unicode::{punctuation, Punctuation};
use super::SyntaxError;
use crate::repair::edit::EditKind;
use crate::repair::lexeme;
use crate::repair::outcome::RefusalCode;

fn ambiguous(message: &str, at: usize) -> SyntaxError {
    SyntaxError::new(RefusalCode::Ambiguous, message, at)
}

impl Parser<'_> {
    /// A quoted value just read (its edits from `mark` on, its raw `body`): refused where its
    /// text has a second reading (see [`doubled_inner_quote`], [`foreign_escape`]).
    pub(super) fn refuse_second_string_reading(&self, mark: usize, quote: u8, body: &str) -> Result<(), SyntaxError> {
        let inner: Vec<usize> =
            self.edits[mark..].iter().filter(|e| e.kind == EditKind::EscapeInnerQuote).map(|e| e.span[0]).collect();
        if let Some(at) = doubled_inner_quote(self.src.as_bytes(), &inner) {
            return Err(ambiguous(
                "quotes doubled inside a string: the text's own, or two strings with the comma between them lost",
                at,
            ));
        }
        let body_start = body.as_ptr() as usize - self.src.as_ptr() as usize;
        match foreign_escape(body) {
            Some(at) if quote == b'\'' => Err(ambiguous(
                "a Python escape JSON lacks (or `\\b`, `\\f`) in a single-quoted string: the escape, or a backslash of the text",
                body_start + at,
            )),
            _ => Ok(()),
        }
    }

    /// Where a member's value starts at `at`: another language's key-value separator there
    /// (`command => "x"`, `command = "x"`, `-> "x"`, `"path" := "x"`) is that separator, or the
    /// start of the value's text (`=> "./deploy.sh"` truncates the script in bash).
    pub(super) fn refuse_other_separator(&self, at: usize) -> Result<(), SyntaxError> {
        let rest = &self.src[at..];
        // `"path"：："/etc"`, `"command"：，ls`: a second colon or a comma of another script or
        // width right after the colon is the value's first character or a doubled separator.
        let wide = rest.chars().next().and_then(punctuation);
        if matches!(wide, Some(Punctuation::Colon | Punctuation::Separator)) {
            return Err(ambiguous("a second separator after the key: the separator doubled, or the value's text?", at));
        }
        let Some(op) = ["=>", "->", "="].into_iter().find(|op| rest.starts_with(op)) else {
            return Ok(());
        };
        let next = rest[op.len()..].chars().next();
        if next.is_none_or(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '{' | '[')) {
            return Err(ambiguous("another separator after the key: the separator, or the value's text?", at));
        }
        Ok(())
    }

    /// At an array item: a number or literal followed at once by a quoted value, a bracket,
    /// or (after a blank) another number (`[7"x"]`, `[true"x"]`, `[1 2]`) is one text or two
    /// items with the comma between them lost.
    pub(super) fn refuse_scalar_then_value(&self, pos: usize) -> Result<(), SyntaxError> {
        if self.innermost() != Some(FrameKind::Array) {
            return Ok(());
        }
        let rest = &self.src[pos..];
        let Some(len) = lexeme::number_len(rest).or_else(|| lexeme::literal_len(rest)) else {
            return Ok(());
        };
        let after = &rest[len..];
        let next = after.trim_start_matches([' ', '\t']);
        let spaced = next.len() < after.len();
        let next = next.as_bytes();
        let starts_value = match next.first() {
            Some(b'"' | b'\'' | b'{' | b'[') => true,
            Some(b'-') => spaced && next.get(1).is_some_and(u8::is_ascii_digit),
            Some(b'0'..=b'9') => spaced,
            _ => false,
        };
        if starts_value {
            return Err(ambiguous(
                "an array item followed by another value: one text, or two items with the comma between them lost",
                pos,
            ));
        }
        Ok(())
    }

    /// An array's comma at `comma` where no item stands since the last separator or the
    /// opening (`[1,,3]`, `[,"b"]`), and an item follows: a hole, not a doubled comma to drop —
    /// dropping it moves every later item up one position.
    pub(super) fn refuse_array_hole(&self, comma: usize, separated: bool) -> Result<(), SyntaxError> {
        if !separated {
            return Ok(());
        }
        let next = self.src.as_bytes()[comma + 1..].iter().find(|b| !b.is_ascii_whitespace() && **b != b',');
        match next {
            Some(b']' | b'}' | b')') | None => Ok(()),
            Some(_) => Err(ambiguous("an array with a hole: an item left out, or a comma doubled?", comma)),
        }
    }

    /// An unquoted value (or a piece of it) wrapped in typographic quotes: delimiters or text.
    pub(super) fn refuse_typographic_delimiters(&self, start: usize, text: &str) -> Result<(), SyntaxError> {
        if has_typographically_quoted_piece(text) {
            return Err(ambiguous("a value wrapped in typographic quotes: delimiters, or its text?", start));
        }
        Ok(())
    }
}

/// Where two inner quotes stand side by side (`a ""quoted"" word`, `["src/main.rs""src/lib.rs"]`)
/// other than as an empty string of the text (`-N "" -f k`, `if x == "":`, `f("")`): the
/// text's own doubled quotes (CSV, SQL), or two strings with the comma between them lost.
pub(super) fn doubled_inner_quote(src: &[u8], inner_quotes: &[usize]) -> Option<usize> {
    // An empty string literal stands after a blank or an operator and before a blank or a
    // closing mark; doubled text quotes and lost commas have a word on at least one side.
    let opens = |at: Option<&u8>| at.is_some_and(|b| b.is_ascii_whitespace() || b"=([,:".contains(b));
    let closes = |at: Option<&u8>| at.is_none_or(|b| b.is_ascii_whitespace() || b":);,]}".contains(b));
    inner_quotes.windows(2).find_map(|pair| {
        let (first, second) = (pair[0], pair[1]);
        let empty_word = first > 0 && opens(src.get(first - 1)) && closes(src.get(second + 1));
        (second == first + 1 && !empty_word).then_some(first)
    })
}

/// Whether `text` is wrapped in typographic quotes (`“npm test”`, `‘a’`, `«a»`, `＂a＂`): the
/// quotes may delimit the value or be its text.
pub(super) fn typographically_quoted(text: &str) -> bool {
    let mut chars = text.chars();
    match (chars.next(), chars.next_back()) {
        (Some(first), Some(last)) => is_typographic_quote(first) && is_typographic_quote(last),
        _ => false,
    }
}

fn is_typographic_quote(c: char) -> bool {
    matches!(
        c,
        '\u{2018}'..='\u{201F}' // ‘ ’ ‚ ‛ “ ” „ ‟
            | '\u{00AB}' | '\u{00BB}' | '\u{2039}' | '\u{203A}' // « » ‹ ›
            | '\u{FF02}' | '\u{FF07}' // ＂ ＇
            | '\u{300C}'..='\u{300F}' // 「 」 『 』
            | '\u{301D}'..='\u{301F}' // 〝 〞 〟
            | '\u{275B}'..='\u{2760}' // ❛ ❜ ❝ ❞ ❟ ❠ (ornaments)
            | '\u{276E}' | '\u{276F}' // ❮ ❯
            | '\u{1F676}'..='\u{1F678}' // 🙶 🙷 🙸
    )
}

/// Whether a unquoted run, or one of its comma-separated pieces, is wrapped in typographic
/// quotes (`“slot machine”, “payout”` at an array position splits into such pieces).
pub(super) fn has_typographically_quoted_piece(text: &str) -> bool {
    typographically_quoted(text.trim()) || text.split(',').any(|piece| typographically_quoted(piece.trim()))
}

/// Where a single-quoted string's body holds a Python (or JavaScript, JSON5) escape JSON does
/// not have (`\xe9`, `\0`, `\N{…}`, `\U0001F600`, `\v`, `\a`, octal `\7`): in a dialect whose
/// `\'` is honoured, the backslash may be the escape's or the text's own. A path's letter
/// (`'D:\archive\a.txt'`) or a regex's back-reference (`'\1'`) is the text's own as often as
/// not, but Python reads a bell and an octal escape there (attack round 26), so those count too.
/// `\b` and `\f` count: JSON has them, but in a string not written as JSON `'\bTODO\b'` is a
/// regex's word boundary as often as a backspace.
pub(super) fn foreign_escape(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let hex =
            |from: usize, n: usize| bytes.get(from..from + n).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        let foreign = match bytes[i + 1] {
            b'x' => hex(i + 2, 2),
            b'U' => hex(i + 2, 8),
            b'N' => bytes.get(i + 2) == Some(&b'{'),
            b'0'..=b'7' | b'a' | b'b' | b'f' | b'v' => true,
            _ => false,
        };
        if foreign {
            return Some(i);
        }
        // Step over the escaped character too: `\\x41` is a backslash and `x41`.
        i += 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repair::lenient::{parse_document, ParseOptions};
    use crate::schema::ShapeSet;

    /// The parse of `src` in generic mode: `Err(message)` when refused as ambiguous.
    fn parsed(src: &str) -> Result<(), String> {
        match parse_document(src, &ShapeSet::generic(), ParseOptions::default()) {
            Ok(_) => Ok(()),
            Err(e) if e.code == RefusalCode::Ambiguous => Err(e.message),
            Err(e) => panic!("{src}: not refused as ambiguous but {:?}: {}", e.code, e.message),
        }
    }

    #[test]
    fn the_parser_refuses_text_with_a_second_reading() {
        let table = [
            (r#"{"paths":["src/main.rs""src/lib.rs"]}"#, "quotes doubled"),
            (r#"{"content":"a ""quoted"" word"}"#, "quotes doubled"),
            (r#"{"params":[7"x"]}"#, "comma between them lost"),
            (r#"{"params":[null"x"]}"#, "comma between them lost"),
            (r#"{"params":[1 2]}"#, "comma between them lost"),
            (r#"{"params":[1,,3]}"#, "hole"),
            (r#"{"params":[,"b"]}"#, "hole"),
            ("{\"path\": “src”}", "typographic"),
            ("{'content': 'caf\\xe9'}", "Python escape"),
            ("{'file_path': 'D:\\archive\\a.txt'}", "Python escape"),
            ("{'file_path': 'D:\\videos\\intro.txt'}", "Python escape"),
            ("{'file_path': 'C:\\1\\a.txt'}", "Python escape"),
        ];
        for (src, reason) in table {
            let message = parsed(src).expect_err(src);
            assert!(message.contains(reason), "{src}: {message}");
        }
        for src in [
            r#"{"paths":["a" "b"]}"#,
            r#"{"params":[1,]}"#,
            r#"{"params":[1,,]}"#,
            r#"{"command": "ssh-keygen -N "" -f k"}"#,
            r#"{"params":[2 apples]}"#,
            r#"{"params":[2024-01-01]}"#,
            "{\"command\": echo “hi” now}",
            "{'path': 'C:\\Dev\\src.js'}",
            "{'path': 'D:\\\\videos\\\\a.txt', 'note': 'it\\'s'}",
        ] {
            assert_eq!(parsed(src), Ok(()), "{src}");
        }
    }

    #[test]
    fn doubled_quotes_inside_text_but_not_an_empty_word() {
        // Positions of the inner quotes as the parser records them.
        let text = br#""a ""quoted"" word""#;
        assert_eq!(doubled_inner_quote(text, &[3, 4, 11, 12]), Some(3));
        let missing_comma = br#""src/main.rs""src/lib.rs""#;
        assert_eq!(doubled_inner_quote(missing_comma, &[12, 13]), Some(12));
        let empty_word = br#""ssh-keygen -N "" -f k""#;
        assert_eq!(doubled_inner_quote(empty_word, &[15, 16]), None);
        let apart = br#""say "hi" now""#;
        assert_eq!(doubled_inner_quote(apart, &[5, 8]), None);
        // An empty string of code before a colon or a closing bracket is the text's own.
        let python = br#""if x == "":""#;
        assert_eq!(doubled_inner_quote(python, &[9, 10]), None);
        let call = br#""f("")""#;
        assert_eq!(doubled_inner_quote(call, &[3, 4]), None);
        // With a word or an opening bracket on one side it is still two readings.
        let brackets = br#""(a)""(b)""#;
        assert_eq!(doubled_inner_quote(brackets, &[4, 5]), Some(4));
    }

    #[test]
    fn typographic_quotes_around_the_whole_value_or_a_piece() {
        for quoted in ["“notes/todo.md”", "‘a’", "«a b»", "＂x＂", "„Hallo“", "「x」"] {
            assert!(typographically_quoted(quoted), "{quoted}");
        }
        for text in ["echo “hi”", "“npm” test", "”", "plain", "\"a\""] {
            assert!(!typographically_quoted(text), "{text}");
        }
        assert!(has_typographically_quoted_piece("“slot machine”, “payout”"));
        assert!(has_typographically_quoted_piece("a, “b”"));
        assert!(!has_typographically_quoted_piece("say “hi”, then go"));
    }

    #[test]
    fn python_escapes_json_lacks() {
        assert_eq!(foreign_escape(r"caf\xe9"), Some(3));
        assert_eq!(foreign_escape(r"a\0b"), Some(1));
        assert_eq!(foreign_escape(r"\N{DASH}"), Some(0));
        assert_eq!(foreign_escape(r"it\'s \d+ C:\\x41"), None);
        assert_eq!(foreign_escape(r"\xZZ"), None);
        assert_eq!(foreign_escape(r"\bTODO\b"), Some(0));
        assert_eq!(foreign_escape(r"C:\Dev\src.js \d+ s/\(x\)/y/ \8 \\v"), None);
        // Python's bell, vertical tab and octal escapes (JavaScript's and JSON5's `\v`).
        assert_eq!(foreign_escape(r"D:\archive\a.txt"), Some(2));
        assert_eq!(foreign_escape(r"D:\videos"), Some(2));
        assert_eq!(foreign_escape(r"col1\vcol2"), Some(4));
        assert_eq!(foreign_escape(r"x\7y"), Some(1));
        assert_eq!(foreign_escape(r"s/\(a\)/\1/"), Some(8));
    }
}
