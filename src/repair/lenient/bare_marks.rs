//! Unquoted text the lenient grammar reads as text, where a slip of the model's could as well
//! have made structure of it (attack round 15): a declared key and its value with the colon
//! lost at the run's end, a written-out escape ending the run,
//! a wrapper's closing tag ending it when the object's `}` is missing, a quoted stretch glued
//! to a word that hides an item separator, a full-width comma or a paren group without a comma
//! where a list may stand. Each is a second reading the parser does not walk: refused.

use super::literal_syntax;
use super::parser::{FrameKind, Parser, WIDE_COMMA};
use super::wrapper;
use super::SyntaxError;
use crate::repair::lexeme;
use crate::repair::outcome::RefusalCode;
use crate::schema::ShapeId;
use serde_json::Value;

fn ambiguous(message: &str, at: usize) -> SyntaxError {
    SyntaxError::new(RefusalCode::Ambiguous, message, at)
}

impl Parser<'_> {
    /// The checks on a bare run's `text` (from `start`, its layout trimmed), read at `shape`.
    pub(super) fn refuse_bare_marks(&self, start: usize, text: &str, shape: ShapeId) -> Result<(), SyntaxError> {
        self.refuse_wrapper_close_in_text(start, text)?;
        self.refuse_member_without_colon(start, text)?;
        let at_list = self.at_list_position(shape);
        let after = self.src.as_bytes().get(start + text.len()..).unwrap_or_default();
        let ends_inside_numeral = text.ends_with(|c: char| c.is_ascii_digit())
            && after.first() == Some(&b',')
            && after.get(1).is_some_and(u8::is_ascii_digit);
        if at_list && (lexeme::digit_comma_digit(text) || ends_inside_numeral) {
            // `[$1,000,000]`, `[3,5]`: a numeral's thousands or decimal comma, or a separator?
            return Err(ambiguous(
                "a comma between digits where a list may stand: a numeral's own, or an item separator?",
                start,
            ));
        }
        let comma_after = after.first() == Some(&b',');
        if at_list && (glued_single_quote_holds_comma(text) || comma_after && opens_glued_single_quote(text)) {
            // `[git log --format='%h, %s', ls]`: a `'` glued after `=` (no apostrophe there)
            // opens a stretch the comma may be inside.
            return Err(ambiguous(
                "a single quote opened after a sign holds a comma where a list may stand: one item, or items?",
                start,
            ));
        }
        if at_list
            && (text.contains("\\,")
                || text.split(',').rev().skip(1).any(opens_angle)
                || comma_after && opens_angle(text))
        {
            // `echo a\, b`: a shell's escaped comma; `HashMap<String, Vec<u8>>`: a generic
            // type's brackets around the comma (attack round 24). One item, or items?
            return Err(ambiguous(
                "an escaped comma or angle brackets around a comma where a list may stand: one item, or items?",
                start,
            ));
        }
        if at_list && text.contains(OTHER_COMMAS) {
            // `[東京、大阪]`, `[القوة القاهرة، المسؤولية]`: the list comma of the text's script.
            return Err(ambiguous(
                "a comma of another script inside an unquoted item where a list may stand: the item's text, or a separator?",
                start,
            ));
        }
        if at_list && text.split_whitespace().any(|word| word == "#") {
            // `[src, tests # main dirs⏎]`: a comment of Python's dict syntax (`#ops`, `C#` are words).
            return Err(ambiguous(
                "a `#` word inside an unquoted item where a list may stand: a comment, or the item's text?",
                start,
            ));
        }
        if at_list && text.split(',').any(|piece| literal_syntax::is_other_null_word(piece.trim())) {
            // `paths: src, nil`: a word for no value as another language spells it, or an item?
            return Err(ambiguous(
                "another spelling of a word for no value (`nil`, `NULL`) in an unquoted list: no value, or an item?",
                start,
            ));
        }
        if at_list && text.split(',').any(unbalanced_marks) {
            // `[“force majeure, act of god”]`, `"commands": echo `date +%H,%M`, ls`: the comma
            // inside typographic quotes or backticks separates items, or is the quoted text's own.
            return Err(ambiguous(
                "typographic quotes or backticks that do not pair inside an unquoted item: is the comma inside them a separator?",
                start,
            ));
        }
        let list_member = self.innermost() == Some(FrameKind::Object) && self.shapes.may_be_array(shape);
        // (A line break at the end, kept as text in one reading, is another question.)
        if list_member && text.trim_end_matches([' ', '\t', '\n', '\r']).contains(['\n', '\r']) {
            // `"terms": - a⏎- b`: one item over lines, or a list, an item a line. Not decisive:
            // a reading where a line break ends the value before a key may still stand.
            return Err(SyntaxError::new(
                RefusalCode::Syntax,
                "unquoted text over several lines where an array may stand: one item, or an item a line?",
                start,
            ));
        }
        if matches!(self.innermost(), Some(FrameKind::Array | FrameKind::List)) && unpaired_closer(text) {
            // `[a] b, c]`: the array closed after `a` (the rest stray), or a `]` of the item's.
            return Err(ambiguous(
                "an unquoted item holding a closer it does not open: the array's end, or its text?",
                start,
            ));
        }
        if text.contains(WIDE_COMMA) && list_member {
            // `"terms": 苹果，香蕉`: the text's own punctuation, or the separator of its items.
            return Err(ambiguous(
                "a full-width comma in unquoted text where an array may stand: the text's own, or an item separator?",
                start,
            ));
        }
        Ok(())
    }

    /// `"content": line one\n}`: a written-out escape that ends the run is layout written out
    /// (double-encoded JSON) or the text's own last line break; unless the object's own layout
    /// is written out that way (`{\n  "command": …`), both read.
    pub(super) fn refuse_trailing_escape(&self, start: usize, text: &str, shape: ShapeId) -> Result<(), SyntaxError> {
        // Only where the text could stand: a list of numbers has no text reading to doubt.
        if !ends_with_written_escape(text) || !self.shapes.may_take(shape, &Value::String(String::new())) {
            return Ok(());
        }
        let layout_written = self.root_open.is_some_and(|open| {
            let rest = self.src[open + 1..].trim_start_matches([' ', '\t']);
            rest.starts_with("\\n") || rest.starts_with("\\r") || rest.starts_with("\\t")
        });
        if layout_written {
            return Ok(());
        }
        Err(ambiguous("a written-out escape ends unquoted text: layout, or the text's own line break?", start))
    }

    /// `{"command": ls -la</tool_call>` with no `}`: the call's closing tag after the object's
    /// lost `}`, or text of the value.
    fn refuse_wrapper_close_in_text(&self, start: usize, text: &str) -> Result<(), SyntaxError> {
        if self.root_unpaired() {
            self.refuse_end_marks_in_text(start, text)?;
        }
        // A wrapper opened before the object is closed by its own tag (`wrapper_closes_at`).
        if self.wrapped || !self.root_unpaired() || !text.contains('<') {
            return Ok(());
        }
        let closes = text.match_indices('<').any(|(at, _)| {
            at > 0
                && (text[at..].starts_with("</") || text[at..].starts_with("<|"))
                && wrapper::suffix(&text[at..], Default::default(), self.tool)
        });
        if closes {
            return Err(ambiguous(
                "a call's closing tag ends unquoted text and the object's '}' is missing: the call's end, or the text's?",
                start,
            ));
        }
        Ok(())
    }

    /// With the object's `}` missing, what ends unquoted text may be the call's end rather than
    /// the text's: another syntax's closing tag or end token after an open wrapper
    /// (`<tool_call>{… "command": echo x<|im_end|>`), a code fence's closing line
    /// (`ls -la⏎```⏎</tool_call>`), or a wrapper's tag that pairs with one the text opens
    /// (`"content": <invoke>y</invoke>` ending where `</invoke>` also ends the call).
    fn refuse_end_marks_in_text(&self, start: usize, text: &str) -> Result<(), SyntaxError> {
        let trimmed = text.trim_end();
        // `<Callout>Note</Callout>`: a closing tag the text itself opened is the text's.
        let own_tag = trimmed.rfind("</").is_some_and(|at| {
            let name = trimmed[at + 2..].trim_end_matches('>');
            opens_tag(&trimmed[..at], name)
        });
        if self.wrapped && ends_in_call_mark(trimmed) && !own_tag {
            return Err(ambiguous(
                "a closing tag or end token ends unquoted text inside a wrapper and the object's '}' is missing: the call's end, or the text's?",
                start,
            ));
        }
        // A fence's line, or a longer fence's leftover backticks (```` after ```json).
        let fence_line = |line: &str| {
            let line = line.trim();
            line.starts_with("```") || (!line.is_empty() && line.chars().all(|c| c == '`'))
        };
        if trimmed.rsplit('\n').next().is_some_and(fence_line) {
            return Err(ambiguous(
                "a code fence's line ends unquoted text and the object's '}' is missing: the fence's, or the text's?",
                start,
            ));
        }
        let rest = self.src[start + text.len()..].trim_start();
        let own_fences = text.lines().filter(|line| line.trim_start().starts_with("```")).count();
        if rest.starts_with("```") && own_fences % 2 == 1 {
            // `"content": # Setup⏎```sh⏎npm install⏎```: the fence after the text may close the
            // block the text opened, not the one around the call.
            return Err(ambiguous(
                "a code fence follows unquoted text that opened a fence of its own and the object's '}' is missing: whose fence is it?",
                start,
            ));
        }
        if let Some(name) = rest.strip_prefix("</").and_then(|tag| tag.split_once('>')).map(|(name, _)| name) {
            if !name.is_empty() && opens_tag(text, name) {
                return Err(ambiguous(
                    "the tag that ends unquoted text pairs with one the text opens and the object's '}' is missing: the call's end, or the text's?",
                    start,
                ));
            }
        }
        Ok(())
    }

    /// `<tool_call>{"command": ls -la</tool_call></tool_call>`: the wrapper's closing tag at
    /// `at` ends unquoted text, the object's `}` is missing and the same tag comes again after
    /// it — the first may be the value's text, and the second the wrapper's.
    pub(super) fn refuse_repeated_closing_tag(&self, at: usize) -> Result<(), SyntaxError> {
        let rest = &self.src[at..];
        let Some(tag) = rest.find('>').map(|end| &rest[..=end]).filter(|tag| tag.starts_with("</")) else {
            return Ok(());
        };
        if self.root_unpaired() && rest[tag.len()..].contains(tag) {
            return Err(ambiguous(
                "the call's closing tag comes twice after unquoted text and the object's '}' is missing: which ends the value?",
                at,
            ));
        }
        Ok(())
    }

    /// `npm test timeout 30`, `grep foo paths [src]`, `fix tests status pending`: a key the
    /// object declares, after a blank, and then a value it takes that ends the run — a member
    /// whose colon (and comma) were lost, or text.
    fn refuse_member_without_colon(&self, start: usize, text: &str) -> Result<(), SyntaxError> {
        let Some(frame) = self.frames.last().filter(|f| f.kind == FrameKind::Object) else {
            return Ok(());
        };
        let (Some(object), Some(keys)) = (frame.shape, frame.keys.as_ref()) else {
            return Ok(());
        };
        let own = self.path.last().map(String::as_str);
        let bytes = text.as_bytes();
        // A key the input spells as a key elsewhere would be read twice: not this reading.
        // (Looked for only once a run holds the shape: a search of the whole input per run
        // would make many runs quadratic.)
        let spelled_elsewhere = |key: &str| self.src.contains(&format!("\"{key}\""));
        for key in keys.iter().filter(|key| !key.is_empty() && Some(**key) != own) {
            for (at, _) in text.match_indices(*key) {
                if at == 0 || !matches!(bytes[at - 1], b' ' | b'\t' | b',' | b'\n') {
                    continue;
                }
                let after = &text[at + key.len()..];
                let value = after.trim_start_matches([' ', '\t']);
                if value.len() == after.len() || value.is_empty() {
                    continue;
                }
                let value_start = start + text.len() - value.len();
                let Some(read) = self.value_ending_run(value, value_start) else { continue };
                let key_shape = self.shapes.property(object, key);
                let fits = match &read {
                    // A bare word counts only where an enum names it.
                    Value::String(word) if !value.starts_with(['"', '\'']) => self.shapes.enum_names(key_shape, word),
                    _ => self.shapes.may_take(key_shape, &read),
                };
                if fits && !spelled_elsewhere(key) {
                    return Err(ambiguous(
                        "a key of the object and a value after a blank end unquoted text: a member whose colon was lost, or text?",
                        start + at,
                    ));
                }
            }
        }
        Ok(())
    }

    /// The value `rest` (at `pos`) reads as, when it runs to the run's end as one value: a
    /// number, a literal, a quoted string, a bracketed array or object, or one word.
    fn value_ending_run(&self, rest: &str, pos: usize) -> Option<Value> {
        let last = pos + rest.len() - 1;
        match rest.as_bytes()[0] {
            b'[' => (self.brackets.closer_of(pos) == Some(last)).then(|| Value::Array(Vec::new())),
            b'{' => (self.brackets.closer_of(pos) == Some(last)).then(|| Value::Object(Default::default())),
            quote @ (b'"' | b'\'') => {
                let inner = &rest[1..];
                (inner.len() > 1 && inner.find(quote as char) == Some(inner.len() - 1))
                    .then(|| Value::String(inner[..inner.len() - 1].to_string()))
            }
            _ if lexeme::number_len(rest) == Some(rest.len()) => serde_json::from_str(rest).ok(),
            _ if lexeme::literal_len(rest) == Some(rest.len()) => serde_json::from_str(rest).ok(),
            _ if !rest.contains(|c: char| c.is_whitespace()) => Some(Value::String(rest.to_string())),
            _ => None,
        }
    }

    /// Whether a bare run at `shape` stands where an array item is read: inside an array or an
    /// unbracketed list, or as a member's value the schema lets be an array.
    fn at_list_position(&self, shape: ShapeId) -> bool {
        match self.innermost() {
            Some(FrameKind::Array | FrameKind::List) => true,
            Some(FrameKind::Object) => self.shapes.may_be_array(shape),
            None => false,
        }
    }

    /// A quoted stretch from `open` to `after` that ends a list item after words and a blank
    /// (`[npm ci "npm test"]`, `src/main.rs 'src/lib.rs', x`): one item with quotes in its text,
    /// or a quoted item whose comma before it was lost?
    pub(super) fn refuse_quoted_item_after_words(
        &self,
        open: usize,
        after: usize,
        run_start: usize,
        shape: ShapeId,
    ) -> Result<(), SyntaxError> {
        let before = &self.src[run_start..open];
        let words = before.trim_end();
        // After a comma (`sauna, "hot, dry"`) the stretch is an item already; after a colon
        // (`"text": "done"`) it is a member's value the run may hold. After another stretch
        // (`a.rs "b.rs" "c.rs"`) it is one more item that may have lost its comma.
        let after_word = words.len() < before.len()
            && words.chars().next_back().is_some_and(|c| c.is_alphanumeric() || "._-/~*+@#%$\"'".contains(c));
        let rest = self.src[after..].trim_start();
        let ends_item = rest.is_empty() || rest.starts_with([',', ']', '}', ')']);
        if after_word && ends_item && self.at_list_position(shape) {
            return Err(ambiguous(
                "a quoted stretch ends a list item after words: one item with quotes in it, or an item whose comma before it was lost?",
                open,
            ));
        }
        Ok(())
    }

    /// A quoted stretch of bare text from `open` to `after` at a list position, glued to a word
    /// on either side and holding a comma (`[foo"a, b"bar]`, `a"x, y"`): one item with quotes
    /// in its text, or items whose separator the stretch hides.
    pub(super) fn refuse_stretch_hiding_separator(
        &self,
        open: usize,
        after: usize,
        run_start: usize,
        shape: ShapeId,
    ) -> Result<(), SyntaxError> {
        let bytes = self.src.as_bytes();
        let inside = &self.src[open + 1..after.saturating_sub(1).max(open + 1)];
        if !inside.contains([',', WIDE_COMMA]) || !self.at_list_position(shape) {
            return Ok(());
        }
        let glued_before = open > run_start && !bytes[open - 1].is_ascii_whitespace();
        let glued_after = self.src[after..].chars().next().is_some_and(char::is_alphanumeric);
        // `[rock 'n roll, the students' union]`: a `'` may be an apostrophe, so a stretch in
        // single quotes with more of the item beside it may be no stretch at all.
        let more_after = !self.src[after..].trim_start_matches([' ', '\t']).starts_with([',', ']', '}', ')']);
        let apostrophes = bytes[open] == b'\'' && (open > run_start || more_after);
        if glued_before || glued_after || apostrophes {
            return Err(ambiguous(
                "a quoted stretch that may be none (glued to a word, or apostrophes) holds a comma where a list may stand: one item, or items whose separator it hides?",
                open,
            ));
        }
        Ok(())
    }

    /// A `(` at `pos` where a list is expected, pairing with a closer and holding no comma at
    /// its own depth (`(foo bar)`, `("a")`): no tuple, but text in parentheses or a group.
    pub(super) fn refuse_paren_without_comma(&self, pos: usize) -> Result<(), SyntaxError> {
        let Some(close) = self.brackets.closer_of(pos) else {
            return Ok(());
        };
        let inside = &self.src[pos + 1..close];
        // `("src")`: in Python a string in parentheses is that string, not text in parentheses.
        let quoted = inside.trim();
        let one_string = quoted.len() >= 2
            && matches!(quoted.as_bytes()[0], b'"' | b'\'')
            && quoted.ends_with(quoted.as_bytes()[0] as char)
            && !quoted[1..quoted.len() - 1].contains(quoted.as_bytes()[0] as char);
        if has_top_level_comma(inside) || one_string {
            return Ok(());
        }
        Err(ambiguous("a paren group without a comma where a list is expected: a tuple, or text?", pos))
    }
}

/// Commas of other scripts: the ideographic (enumeration) comma, the Arabic one, the
/// full-width one.
pub(super) const OTHER_COMMAS: [char; 3] = ['\u{3001}', '\u{060C}', WIDE_COMMA];

/// Whether an odd count of `'` in an item has one right after a sign or symbol (`='`, `:'`,
/// `$'`, `/'`): an apostrophe stands between letters or after one (`don't`, `students'`).
fn opens_glued_single_quote(text: &str) -> bool {
    let bytes = text.as_bytes();
    let glued = (1..bytes.len())
        .any(|at| bytes[at] == b'\'' && !bytes[at - 1].is_ascii_alphanumeric() && !bytes[at - 1].is_ascii_whitespace());
    glued && bytes.iter().filter(|&&b| b == b'\'').count() % 2 == 1
}

/// Whether a `'` glued after a sign opens a stretch, closed in the item, that holds a comma
/// (`make CFLAGS='-O2, -g'`): the list is split on that comma, as it would be without quotes,
/// or the stretch is one shell word.
fn glued_single_quote_holds_comma(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 1;
    while at < bytes.len() {
        let glued =
            bytes[at] == b'\'' && !bytes[at - 1].is_ascii_alphanumeric() && !bytes[at - 1].is_ascii_whitespace();
        if !glued {
            at += 1;
            continue;
        }
        let Some(close) = memchr::memchr(b'\'', &bytes[at + 1..]).map(|offset| at + 1 + offset) else {
            return false;
        };
        if bytes[at + 1..close].contains(&b',') {
            return true;
        }
        at = close + 1;
    }
    false
}

/// Whether `text` leaves a `<` open after a word (`HashMap<String`): a generic's bracket.
fn opens_angle(text: &str) -> bool {
    let opened = text.match_indices('<').filter(|(at, _)| text[..*at].ends_with(|c: char| c.is_alphanumeric())).count();
    opened > text.matches('>').count()
}

/// Whether `text` opens a tag named `name` (`<name>`, `<name attr…>`).
fn opens_tag(text: &str, name: &str) -> bool {
    !name.is_empty()
        && text.match_indices('<').any(|(at, _)| {
            text[at + 1..].strip_prefix(name).is_some_and(|after| after.starts_with([' ', '>', '/', '\t', '\n']))
        })
}

/// Whether text ends in a closing tag (`</tool_call>`, `</s>`) or a model's special token
/// (`<|im_end|>`, `<|eot_id|>`).
fn ends_in_call_mark(text: &str) -> bool {
    let Some(body) = text.strip_suffix('>') else { return false };
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '.');
    if let Some(token) = body.strip_suffix('|') {
        let name = token.trim_end_matches(name_char);
        return name.ends_with("<|") && name.len() < token.len();
    }
    let name = body.trim_end_matches(name_char);
    name.ends_with("</") && name.len() < body.len()
}

/// Whether typographic quotes or backticks in an item do not pair: an odd number of double
/// ones (`“ ” „ « » ‹ › 「 」`) or of backticks, or a `‘` no `’` closes (a lone `’` is an
/// apostrophe: `John’s`).
fn unbalanced_marks(text: &str) -> bool {
    let count = |set: &[char]| text.chars().filter(|c| set.contains(c)).count();
    let doubles = count(&[
        '\u{201C}', '\u{201D}', '\u{201E}', '\u{201F}', '\u{AB}', '\u{BB}', '\u{2039}', '\u{203A}', '\u{300C}',
        '\u{300D}',
    ]);
    doubles % 2 == 1 || count(&['`']) % 2 == 1 || count(&['\u{2018}']) > count(&['\u{2019}'])
}

/// Whether `text` holds a `]` or `}` that no bracket before it in the text opens.
fn unpaired_closer(text: &str) -> bool {
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'[' | b'{' | b'(' => depth += 1,
            b']' | b'}' | b')' if depth > 0 => depth -= 1,
            b']' | b'}' => return true,
            _ => {}
        }
    }
    false
}

/// Whether `text` ends with a written-out `\n`, `\r` or `\t` (its backslash not itself escaped).
fn ends_with_written_escape(text: &str) -> bool {
    let Some(body) = text.strip_suffix(['n', 'r', 't']) else {
        return false;
    };
    let run = body.bytes().rev().take_while(|&b| b == b'\\').count();
    run % 2 == 1
}

/// Whether `inside` (a bracket's contents) holds a comma outside nested brackets and quotes.
fn has_top_level_comma(inside: &str) -> bool {
    let mut depth = 0usize;
    let mut quote = None;
    for byte in inside.bytes() {
        match (quote, byte) {
            (Some(q), _) if byte == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(byte),
            (None, b'(' | b'[' | b'{') => depth += 1,
            (None, b')' | b']' | b'}') => depth = depth.saturating_sub(1),
            (None, b',') if depth == 0 => return true,
            _ => {}
        }
    }
    inside.contains(WIDE_COMMA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closing_tag_or_special_token_ends_text_and_markup_inside_does_not() {
        assert!(ends_in_call_mark("echo x<|im_end|>"));
        assert!(ends_in_call_mark("echo x</s>"));
        assert!(ends_in_call_mark("echo x</tool_call>"));
        assert!(!ends_in_call_mark("echo x<||>"));
        assert!(!ends_in_call_mark("echo x</>"));
        assert!(!ends_in_call_mark("echo a > b"));
        assert!(!ends_in_call_mark("echo x</b> more"));
    }

    #[test]
    fn a_tag_is_opened_only_by_its_own_name() {
        assert!(opens_tag("<Callout>Note", "Callout"));
        assert!(opens_tag("echo <invoke name=\"x\">y", "invoke"));
        assert!(!opens_tag("<Callouts>Note", "Callout"));
        assert!(!opens_tag("</invoke>", "invoke"));
        assert!(!opens_tag("<b>", ""));
    }

    #[test]
    fn a_quote_glued_after_a_sign_opens_a_stretch_and_an_apostrophe_does_not() {
        assert!(opens_glued_single_quote("git log --format='%h"));
        assert!(opens_glued_single_quote("echo $'a"));
        assert!(!opens_glued_single_quote("don't stop"));
        assert!(!opens_glued_single_quote("the students' union"));
        assert!(!opens_glued_single_quote("x='a' y"), "a pair closed inside the item");
        assert!(glued_single_quote_holds_comma("make CFLAGS='-O2, -g'"));
        assert!(glued_single_quote_holds_comma("a='x' b='y, z'"), "the second stretch");
        assert!(!glued_single_quote_holds_comma("make CFLAGS='-O2 -g', ls"), "the comma outside");
        assert!(!glued_single_quote_holds_comma("don't, won't"), "apostrophes");
        assert!(!glued_single_quote_holds_comma("x='a, b"), "not closed: the other rule's");
    }

    #[test]
    fn a_written_escape_at_the_end_unless_its_backslash_is_escaped() {
        assert!(ends_with_written_escape(r"ls -la\n"));
        assert!(ends_with_written_escape(r"a\t"));
        assert!(!ends_with_written_escape(r"a\\n"));
        assert!(ends_with_written_escape(r"a\\\n"));
        assert!(!ends_with_written_escape("plain"));
    }

    #[test]
    fn commas_at_a_paren_groups_own_depth() {
        assert!(has_top_level_comma("a, b"));
        assert!(!has_top_level_comma("foo bar"));
        assert!(!has_top_level_comma("f(a, b)"));
        assert!(!has_top_level_comma("\"a, b\""));
        assert!(has_top_level_comma("苹果，香蕉"));
    }
}
