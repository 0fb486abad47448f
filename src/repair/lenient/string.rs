//! `string = quote (char | escape | inner_quote | control)* quote?`
//!
//! A quote ends the string where what follows continues the enclosing container. The first
//! quote followed by other text (a letter, another quote) starts the inner-quote reading: the
//! string runs on to the next quote that is followed by a valid continuation. If there is none
//! (the string may end at that first quote, or run on and be cut), or the inner quotes do not
//! pair up, the input is refused as ambiguous.

use super::parser::Parser;
use super::production::Production;
use super::unicode::{colon_like_len, punctuation, Punctuation};
use super::SyntaxError;
use crate::repair::edit::EditKind;
use crate::repair::lexeme;
use crate::repair::outcome::RefusalCode;
use crate::schema::ShapeId;
use std::ops::Range;

impl Parser<'_> {
    /// `value_shape`: the shape the string stands at (`None` for a key).
    pub(super) fn string(
        &mut self,
        open: usize,
        quote: u8,
        value_shape: Option<ShapeId>,
    ) -> Result<(String, usize), SyntaxError> {
        let key = value_shape.is_none();
        self.hit(if quote == b'"' { Production::String } else { Production::SingleString });
        let bytes = self.src.as_bytes();
        let mut text = String::new();
        let mut edits: Vec<(EditKind, Range<usize>)> = Vec::new();
        // The first inner quote, where the standard reading would have ended the string.
        let mut standard: Option<usize> = None;
        let mut letter_escape = false;
        // `\n`, `\t` and `\r` between letters or digits (`docs\new\readme.txt`).
        let mut word_escapes = Vec::new();
        let mut invalid_escape = None;
        // The last quote of the text so far: a quoted key inside the string starts there.
        let mut last_quote = open;
        // How many `{` the text so far leaves open: key shapes inside them are the text's own.
        let mut brace_depth = 0usize;
        // The first key shape kept as text because it stood inside such a `{`.
        let mut inside_text_braces = None;
        let mut i = open + 1;
        let end = loop {
            let Some(&byte) = bytes.get(i) else {
                if let Some(quote_at) = standard {
                    // The string may end at its first inner quote, or run on and be cut: what
                    // follows that quote cannot be told from text of the string.
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a quote inside the string has no partner: where the string ends is unclear",
                        quote_at,
                    ));
                }
                if key {
                    return Err(SyntaxError::new(RefusalCode::Syntax, "unterminated key", open));
                }
                // Where it was meant to end is unknown: the text may have been cut.
                return Err(SyntaxError::new(RefusalCode::Truncated, "the input ends inside a string", open));
            };
            if byte == b'\\' {
                if lexeme::after_drive_letter(bytes, i)
                    && matches!(bytes.get(i + 1), Some(b'n' | b't' | b'r' | b'b' | b'f'))
                {
                    // `"cd C:\new\table"`: a Windows path, or a line break and a tab?
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a letter escape right after a drive letter: a path's backslash or an escape?",
                        i,
                    ));
                }
                if quote == b'"' && matches!(bytes.get(i + 1), Some(b'b' | b'f')) {
                    // `"\bTODO\b"`, `"$\frac{a}{b}$"`: a regex's or LaTeX's backslash left
                    // unescaped, or a backspace or form feed no tool input means (a single-
                    // quoted string's are asked about with the other escapes JSON lacks).
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a \\b or \\f escape: the text's own backslash (a regex, LaTeX) or a control character?",
                        i,
                    ));
                }
                if let Some(spot) = lexeme::escape_spot(&text, bytes, i) {
                    word_escapes.push((i, spot));
                }
                let (consumed, letter) = self.escape(i, quote, &mut text)?;
                self.hit(if consumed == 1 { Production::BadEscape } else { Production::Escape });
                if consumed == 1 {
                    edits.push((EditKind::KeepBackslash, i..i + 1));
                    invalid_escape.get_or_insert(i);
                }
                letter_escape |= letter;
                i += consumed;
            } else if byte == quote {
                let text_member_follows = standard.is_some()
                    && value_shape.is_some_and(|shape| self.member_after_is_text(i + 1, shape, brace_depth));
                if text_member_follows {
                    inside_text_braces.get_or_insert(i);
                }
                if key || (self.value_ends_after(i + 1, false) && !text_member_follows) {
                    break i + 1;
                }
                // The string ends here only if a comment follows (`"cd "src" // go"}`): the
                // comment may be text of the string — both readings are walked.
                if !text_member_follows
                    && self.value_ends_at(i + 1)
                    && self.choices.choose(2) == super::choices::TAKE_AS_STRUCTURE
                {
                    break i + 1;
                }
                if standard.is_none() {
                    // Structure right after the quote, or a space and another quote (a
                    // missing comma), keep the standard reading.
                    let next = self.skip_ws_quiet(i + 1);
                    let spaced_quote = next > i + 1 && matches!(bytes.get(next), Some(b'"' | b'\''));
                    if spaced_quote
                        || matches!(bytes.get(next), Some(b',' | b':' | b'}' | b']' | b'+'))
                        || self.wide_separator_at(next)
                    {
                        break i + 1;
                    }
                    standard = Some(i);
                } else if self.wide_separator_before_value(i + 1) {
                    // `"a"x"*.md"，path: "docs"`, `["a"x"a.md"，"b.md"]`: another script's comma
                    // and a key or a quoted value after a quote: the string may end there.
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a wide separator and a key or value inside a string: where the string ends is unclear",
                        i,
                    ));
                } else if colon_like_len(&self.src[self.skip_ws_quiet(i + 1)..]).is_some()
                    && value_shape.is_none_or(|shape| !self.key_in_string_is_text(last_quote, i, shape, brace_depth))
                {
                    // `"b,"c":"d"`: a key inside the string; a quote is missing somewhere.
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a quoted key inside a string: where the string ends is unclear",
                        i,
                    ));
                }
                if brace_depth > 0 && self.byte_after_ws(i + 1) == Some(b':') {
                    inside_text_braces.get_or_insert(i);
                }
                self.hit(Production::InnerQuote);
                edits.push((EditKind::EscapeInnerQuote, i..i + 1));
                text.push(byte as char);
                last_quote = i;
                i += 1;
            } else if byte < 0x20 {
                self.hit(Production::Control);
                edits.push((EditKind::EscapeControlChar, i..i + 1));
                text.push(byte as char);
                i += 1;
            } else {
                let run = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\\' || b == quote || b < 0x20)
                    .map_or(bytes.len(), |n| i + n);
                for brace in self.src[i..run].bytes() {
                    match brace {
                        b'{' => brace_depth += 1,
                        b'}' => brace_depth = brace_depth.saturating_sub(1),
                        _ => {}
                    }
                }
                text.push_str(&self.src[i..run]);
                i = run;
            }
        };
        if let (true, Some(at)) = (letter_escape, invalid_escape) {
            if edits.iter().any(|(kind, span)| *kind == EditKind::KeepBackslash && span.start == at) {
                return Err(SyntaxError::new(
                    RefusalCode::Ambiguous,
                    "string mixes JSON escapes with backslashes that escape nothing",
                    at,
                ));
            }
        }
        let body = &self.src[open + 1..end - 1];
        let letters = word_escapes.iter().map(|&(at, spot)| (at - open - 1, bytes[at + 1], spot));
        let over_lines = body.contains('\n') || body.matches("\\n").count() > 1;
        if let Some(at) =
            lexeme::path_like_escape(body, letters, |b| matches!(b, b' ' | b'\t' | b'\n'), b"\\\\", over_lines)
        {
            // A word of the text, a path or a name: `src\tests` is a path's backslash as often
            // as a tab.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "a letter escape inside a word, or starting one after a space or at the start: a path's backslash, or a line break or tab?",
                open + 1 + at,
            ));
        }
        if let (Some(at), true) = (inside_text_braces, brace_depth > 0) {
            // `"echo {"hi" > f", "foo": 1`: the `{` that kept the key shapes as text never
            // closes, so it may be the text's own stray brace, not an object the text holds.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "a quoted key inside a string, after a brace the string never closes: where the string ends is unclear",
                at,
            ));
        }
        let inner_quotes = edits.iter().filter(|(kind, _)| *kind == EditKind::EscapeInnerQuote).count();
        if inner_quotes % 2 == 1 {
            // `"echo "hello"}`: the last quote may close the inner word or the string.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "an odd number of quotes inside the string: which one ends it is unclear",
                open,
            ));
        }
        for (kind, span) in edits {
            self.edit(kind, span);
        }
        if quote == b'\'' {
            self.edit(EditKind::SingleToDoubleQuotes, open..end);
        }
        Ok((text, end))
    }

    /// A comma or colon of another script or width at `pos` (`，`, `、`, `：`).
    fn wide_separator_at(&self, pos: usize) -> bool {
        let class = self.src[pos..].chars().next().and_then(punctuation);
        matches!(class, Some(Punctuation::Separator | Punctuation::Colon))
    }

    /// After blanks from `pos`, a wide separator and then a quoted value or a key and its colon
    /// of any spelling (`，"b.md"`, `，"path"：`, `、path: `).
    fn wide_separator_before_value(&self, pos: usize) -> bool {
        let at = self.skip_ws_quiet(pos);
        if !self.wide_separator_at(at) {
            return false;
        }
        let key = self.skip_ws_quiet(at + self.src[at..].chars().next().map_or(0, char::len_utf8));
        let rest = &self.src[key..];
        if rest.starts_with(['"', '\'']) {
            return true;
        }
        let name_len = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].find(q).map(|n| n + 2),
            _ => Some(rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len())),
        };
        name_len.is_some_and(|len| len > 0 && colon_like_len(&self.src[self.skip_ws_quiet(key + len)..]).is_some())
    }

    /// Decodes the escape at `at` into `text`. Returns the bytes consumed (1 when the backslash
    /// starts no escape and is kept literally) and whether a backslash kept literally would read
    /// it otherwise: a letter escape (`\n`, `\u..`) or `\\` (`\\srv\share`: one backslash or two).
    fn escape(&mut self, at: usize, quote: u8, text: &mut String) -> Result<(usize, bool), SyntaxError> {
        let bytes = self.src.as_bytes();
        let decoded = match bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'\'') if quote == b'\'' => '\'',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => match self.unicode_escape(at)? {
                Some((ch, len)) => {
                    text.push(ch);
                    return Ok((len, true));
                }
                None => {
                    text.push('\\');
                    return Ok((1, false));
                }
            },
            _ => {
                text.push('\\');
                return Ok((1, false));
            }
        };
        text.push(decoded);
        // An escaped quote counts too: next to a backslash that escapes nothing (`\"%s\v\"`),
        // `\"` may be the text's own backslash and quote.
        // So does `\/` (`s/\/usr\/local/…/ \;` in sed, `/a\/b\d/` in a regex literal).
        let reads_otherwise =
            matches!(decoded, '\\' | '"' | '\'' | '/') || decoded.is_ascii_alphabetic() || decoded.is_ascii_control();
        Ok((2, reads_otherwise))
    }

    /// `\uXXXX`, with a surrogate pair as one character. `None` when the hex digits are missing.
    fn unicode_escape(&self, at: usize) -> Result<Option<(char, usize)>, SyntaxError> {
        let hex = |from: usize| {
            self.src
                .get(from..from + 4)
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
        };
        let Some(unit) = hex(at + 2) else {
            return Ok(None);
        };
        if let Some(ch) = char::from_u32(unit) {
            return Ok(Some((ch, 6)));
        }
        let low = (self.src.get(at + 6..at + 8) == Some("\\u")).then(|| hex(at + 8)).flatten();
        match low {
            Some(low) if (0xD800..0xDC00).contains(&unit) && (0xDC00..0xE000).contains(&low) => {
                let combined = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                Ok(char::from_u32(combined).map(|ch| (ch, 12)))
            }
            _ => Err(SyntaxError::new(RefusalCode::Syntax, "lone surrogate in a \\u escape", at)),
        }
    }
}
