//! Side-effect-free looks ahead: where a value may end, where a key starts, what text around
//! the object may be dropped. Each look is bounded so the whole parse stays linear.

use super::parser::{Frame, FrameKind, Parser};
use super::unicode::{
    colon_like_len, equals_like_len, is_blank, is_colon_like, is_inline_blank, is_invisible, is_line_break,
    punctuation, visible, Punctuation,
};
use super::wrapper;
use crate::repair::lexeme;
use std::cell::OnceCell;

/// Longest quoted key a look ahead will scan for.
const MAX_KEY_LOOKAHEAD: usize = 256;

/// How many closers in a row a look past a closer in a quoted stretch steps over.
const MAX_CLOSERS_BEFORE_MEMBER: usize = 3;

/// A key followed by `:`, found by a look ahead.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyAt {
    pub after_colon: usize,
    /// Declared and quoted: structure, never text.
    pub strong: bool,
    pub quoted: bool,
    /// A colon follows the key (`"title" "x"` has lost its colon).
    pub colon: bool,
    /// The member grammar reads this spelling. One it cannot read (`@key:`, `` `key`: ``,
    /// `key::true`, `key=true`) gives no member reading: kept as text, it is a doubt.
    pub readable: bool,
}

/// Characters of a key word: letters, digits, `_ - $ .`, and the invisible ones; no colon
/// look-alike, though `\u{02D0}` and `\u{A4FD}` are letters.
fn is_key_char(c: char) -> bool {
    (c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '.') || is_invisible(c)) && !is_colon_like(c)
}

/// A letter of a CJK script: Hiragana, Katakana, Han, Hangul.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}')
}

/// A whole key word with a letter (`dry_run`, not `12` or `a b`).
fn is_key_word(text: &str) -> bool {
    text.chars().all(is_key_char) && text.chars().any(char::is_alphabetic)
}

/// `True`, `False`, `None`: Python's literals, a literal-looking value too.
fn python_literal_len(text: &str) -> Option<usize> {
    ["True", "False", "None"].iter().find(|literal| text.starts_with(**literal)).map(|literal| literal.len())
}

/// A JSON scalar that is a member's whole value at the start of `text`: `true`, `600000`,
/// `"x"`, then the member's end (`FOO=1 npm test` is a shell assignment, not a member).
pub(super) fn scalar_ends_member(text: &str) -> bool {
    let value = text.trim_start_matches(is_inline_blank);
    let len = match value.strip_prefix('"') {
        Some(body) => body.find(['"', '\n']).filter(|&close| body[close..].starts_with('"')).map(|close| close + 2),
        None => lexeme::literal_len(value).or_else(|| python_literal_len(value)).or_else(|| lexeme::number_len(value)),
    };
    len.is_some_and(|len| ends_member(&value[len..]))
}

/// Whether a member ends at the start of `text`: blanks, then the end, a comma, a closer or a
/// line break.
fn ends_member(text: &str) -> bool {
    let after = text.trim_start_matches(is_inline_blank);
    after.is_empty() || after.starts_with([',', '}', ']']) || after.starts_with(is_line_break)
}

/// One word that is a member's whole value at the start of `text` (`yes}`, `*.rs,`; not the
/// `1` of `f(a=1)`).
fn word_ends_member(text: &str) -> bool {
    let value = text.trim_start_matches(is_inline_blank);
    let len = value.find(|c: char| is_blank(c) || matches!(c, ',' | '}' | ']' | ')')).unwrap_or(value.len());
    len > 0 && ends_member(&value[len..])
}

/// Whether a value starts in `text`, after blanks on the same line: anything but the end, a
/// comma or a closer.
fn value_follows(text: &str) -> bool {
    let value = text.trim_start_matches(is_inline_blank);
    value.chars().next().is_some_and(|c| !is_line_break(c) && !matches!(c, ',' | '}' | ']'))
}

/// A JSON scalar starting a value at the start of `text` (`true`, `5 s`, `"x"`, `True`): a
/// member's shape more than text's after a plain word mid-line (`fix: handle it` stays text).
fn json_value_starts(text: &str) -> bool {
    let value = text.trim_start_matches(is_inline_blank);
    let literal = lexeme::literal_len(value).or_else(|| python_literal_len(value));
    literal.is_some_and(|len| !value[len..].starts_with(char::is_alphanumeric))
        || value.starts_with(|c: char| c.is_ascii_digit() || c == '"')
            && value.split_whitespace().next().is_some_and(|token| {
                token.starts_with('"') || token.trim_end_matches([',', ';', ')', '}', ']']).parse::<f64>().is_ok()
            })
}

/// A colon spelled another way glued to a value at the start of `text`: a look-alike before
/// any value (`\u{FF1A}true`), `::` before a scalar (`::600000`; `timeout::tests` is a path).
fn glued_odd_colon_member(text: &str) -> bool {
    match odd_colon(text) {
        Some((len, OddColon::LookAlike)) => value_follows(&text[len..]),
        Some((len, OddColon::Double)) => json_value_starts(&text[len..]),
        _ => false,
    }
}

/// A colon spelled another way at the start of `text` (the member grammar cannot read it):
/// its length and kind.
fn odd_colon(text: &str) -> Option<(usize, OddColon)> {
    if text.starts_with("::") {
        return Some((2, OddColon::Double));
    }
    if let Some(len) = colon_like_len(text).filter(|_| !text.starts_with(':')) {
        return Some((len, OddColon::LookAlike));
    }
    // `key = v`, `key => v`, `key == v`: an assignment or a Ruby pair; `key\u{FF1D}v` too.
    let blanks = text.len() - text.trim_start_matches(is_inline_blank).len();
    let equals = ["=>", "==", "="].iter().find(|op| text[blanks..].starts_with(**op)).map(|op| op.len());
    let equals = equals.or_else(|| equals_like_len(&text[blanks..]))?;
    Some((blanks + equals, OddColon::Equals))
}

/// How an odd colon is spelled, which says what value makes it a member's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OddColon {
    /// `key::v`: any value.
    Double,
    /// `key\u{2236} v`, `key\u{FF1A}v`: any value.
    LookAlike,
    /// `key=v`: a shell assignment too (`FOO=1 npm test`), so a member's only before one word
    /// or a scalar that ends the member, or for a declared name.
    Equals,
}

/// What prose or other syntaxes put around a key: an opening, a closing, and whether it marks
/// a key whatever its name (strong) or only a declared one (brackets, `#`, `~~`, `<…>`, Ruby's
/// `:`, an object's `{`, a shell's `${…}`, a Windows `%…%`: code and shell text use them too).
/// Past these, HTML elements and the punctuation of every script open one (see [`openings`]).
const DECORATIONS: [(&str, &str, bool); 23] = [
    ("**", "**", true),
    ("*", "*", true),
    ("`", "`", true),
    ("@", "", true),
    ("\u{201C}", "\u{201D}", true),
    ("\u{201C}", "\u{201C}", true),
    ("\u{201D}", "\u{201D}", true),
    ("\u{2018}", "\u{2019}", true),
    ("\u{FF02}", "\u{FF02}", true),
    ("\u{FF07}", "\u{FF07}", true),
    ("\u{AB}", "\u{BB}", true),
    ("\u{201E}", "\u{201C}", true),
    ("\u{201E}", "\u{201D}", true),
    ("~~", "~~", false),
    ("[", "]", false),
    ("(", ")", false),
    ("<", ">", false),
    ("{", "", false),
    ("[", "", false),
    ("#", "", false),
    (":", "", false),
    ("${", "}", false),
    ("%", "%", false),
];

/// How many decorations one inside another a key's spelling may have.
const MAX_NESTED_DECORATIONS: usize = 3;

/// How many blanks a decoration that closes may hold on each side of its name
/// (`` ` dry_run `: ``, `** dry_run **:`).
const MAX_DECORATION_BLANKS: usize = 3;

/// The longest HTML element name read as a decoration (`<code>`, `<strong>`, `<kbd>`).
const MAX_TAG_NAME: usize = 16;

/// Where a decoration closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close<'s> {
    /// This text; none where the decoration only opens (`@dry_run:`).
    Text(&'s str),
    /// Closing or two-way punctuation of any script (`「dry_run」`, `‹dry_run›`, `»dry_run«`).
    Punctuation,
    /// The closing tag of the HTML element of this name (`<code>dry_run</code>`).
    Tag(&'s str),
}

impl Close<'_> {
    /// The length of this close at the start of `text`.
    fn len_at(self, text: &str) -> Option<usize> {
        match self {
            Close::Text(close) => text.starts_with(close).then_some(close.len()),
            Close::Punctuation => text
                .chars()
                .next()
                .filter(|&c| matches!(punctuation(c), Some(Punctuation::Closing | Punctuation::Either)))
                .map(char::len_utf8),
            Close::Tag(name) => text.strip_prefix("</")?.strip_prefix(name)?.starts_with('>').then_some(name.len() + 3),
        }
    }

    /// Whether the decoration closes at all: only then may it hold blanks.
    fn pairs(self) -> bool {
        self != Close::Text("")
    }
}

/// Which names a decoration marks as a key's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marks {
    /// Any name.
    AnyName,
    /// Only a declared one (code and shell text use the decoration too).
    Declared,
    /// A name spelled as keys are (see [`is_key_spelling`]), or a declared one: CJK text puts
    /// its own words in `「…」` and `【…】`.
    KeyShaped,
}

/// A decoration opening at the start of a text.
struct Opening<'s> {
    len: usize,
    close: Close<'s>,
    marks: Marks,
}

/// The decorations that may open at the start of `rest`, in the order they are tried: an HTML
/// element's tag, the table's, then opening or two-way punctuation of any script (Ps, Pi, Pf,
/// primes; see [`Punctuation`]).
fn openings(rest: &str) -> impl Iterator<Item = Opening<'_>> {
    let tag =
        html_tag(rest).map(|name| Opening { len: name.len() + 2, close: Close::Tag(name), marks: Marks::Declared });
    let table =
        DECORATIONS.iter().filter(move |(open, _, _)| rest.starts_with(open)).map(|&(open, close, strong)| Opening {
            len: open.len(),
            close: Close::Text(close),
            marks: if strong { Marks::AnyName } else { Marks::Declared },
        });
    let script = rest
        .chars()
        .next()
        .filter(|&c| matches!(punctuation(c), Some(Punctuation::Opening | Punctuation::Either)))
        .map(|c| Opening { len: c.len_utf8(), close: Close::Punctuation, marks: Marks::KeyShaped });
    tag.into_iter().chain(table).chain(script)
}

/// The element name of an HTML opening tag without attributes at the start of `text` (`<b>`).
fn html_tag(text: &str) -> Option<&str> {
    let name = text.strip_prefix('<')?;
    let len = name.bytes().take(MAX_TAG_NAME + 1).position(|b| !b.is_ascii_alphanumeric())?;
    let letter_first = name.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
    (letter_first && name[len..].starts_with('>')).then(|| &name[..len])
}

/// A name spelled as keys are: ASCII letters, digits and `_ - $ .`, a letter among them. In CJK
/// or Arabic punctuation such a name is a key's; a word of the script is the text's own.
fn is_key_spelling(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'$' | b'.'))
        && name.bytes().any(|b| b.is_ascii_alphabetic())
}

/// The length of the blanks (up to [`MAX_DECORATION_BLANKS`]) at the start of `text`.
fn decoration_blanks_len(text: &str) -> usize {
    text.chars().take(MAX_DECORATION_BLANKS).take_while(|&c| is_inline_blank(c)).map(char::len_utf8).sum()
}

/// How a name at a position is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decoration {
    /// A bare word.
    Plain,
    /// In ASCII quotes.
    Quoted,
    /// A decoration that marks a key whatever its name, or an invisible character inside it.
    Strong,
    /// A decoration that marks only a declared name.
    Weak,
}

/// A name spelled at a position (see [`Parser::spelled_name_at`]).
struct Spelled<'s> {
    name: &'s str,
    /// Where the spelling ends (past a closing decoration).
    end: usize,
    decoration: Decoration,
    /// The colon is inside the decoration (`**key:**`): the spelling ends past it.
    colon_inside: bool,
}

/// Where in bare text a key is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Spot {
    /// After a comma.
    Comma,
    /// At a line start.
    LineStart,
    /// After a blank, mid-line.
    MidLine,
    /// Right after a member's value, on its line.
    AfterMember,
}

pub(super) fn is_closer(byte: u8) -> bool {
    matches!(byte, b'}' | b']')
}

impl<'s> Parser<'s> {
    /// Skips whitespace and comments without recording anything.
    pub(super) fn skip_ws_quiet(&self, mut pos: usize) -> usize {
        while pos < self.src.len() {
            let rest = &self.src[pos..];
            match lexeme::whitespace_len(rest)
                .or_else(|| self.comments.len_at(self.src, pos))
                .or_else(|| lexeme::literal_escape_len(rest))
            {
                Some(len) => pos += len,
                None => break,
            }
        }
        pos
    }

    pub(super) fn byte_after_ws(&self, pos: usize) -> Option<u8> {
        self.src.as_bytes().get(self.skip_ws_quiet(pos)).copied()
    }

    /// If a key followed by `:` starts at `pos`, the position after the colon. Quoted keys of
    /// any name count; an unquoted word counts only where `allow_bare` and it is a key the
    /// enclosing object declares (any word, when it declares none).
    pub(super) fn key_colon_at(&self, pos: usize, allow_bare: bool) -> Option<usize> {
        self.key_at(pos, allow_bare).map(|key| key.after_colon)
    }

    /// The key at `pos`, with how strongly it marks structure: a quoted name the object
    /// declares (or any quoted name where it declares none) is strong; an undeclared quoted
    /// name or an unquoted word is weak — inside bare text it may just be text.
    pub(super) fn key_at(&self, pos: usize, allow_bare: bool) -> Option<KeyAt> {
        let bytes = self.src.as_bytes();
        let first = *bytes.get(pos)?;
        if let Some((_, end)) = self.damaged_key(pos) {
            // A damaged key is structure only as a weak reading: it may be text.
            let colon = self.skip_ws_quiet(end);
            return Some(KeyAt { after_colon: colon + 1, strong: false, quoted: false, colon: true, readable: true });
        }
        let (after_key, strong) = if first == b'"' || first == b'\'' {
            let limit = (pos + 1 + MAX_KEY_LOOKAHEAD).min(bytes.len());
            let close = bytes[pos + 1..limit].iter().position(|&b| b == first || b == b'\n').map(|i| pos + 1 + i)?;
            if bytes[close] != first {
                return None;
            }
            (close + 1, self.is_declared_or_open(&self.src[pos + 1..close]))
        } else if allow_bare {
            let len = self.unquoted_key_len(pos)?;
            let word = &self.src[pos..pos + len];
            if !self.is_known_key(word) {
                return None;
            }
            (pos + len, false)
        } else {
            return None;
        };
        let colon = self.skip_ws_quiet(after_key);
        if bytes.get(colon) != Some(&b':') || self.src[colon..].starts_with("://") {
            return None;
        }
        Some(KeyAt {
            after_colon: colon + 1,
            strong,
            quoted: first == b'"' || first == b'\'',
            colon: true,
            readable: true,
        })
    }

    /// A key inside bare text at `pos`, as a weak reading where it is not one by
    /// [`Self::key_at`]: any unquoted word (`dry_run`, `--dry-run`) followed by `:` that starts
    /// no path or scheme (`host:/x`, `a::b`) — in a closed object too, the model may have meant
    /// a member the tool does not take. After a comma or at a line start: a declared name that
    /// lost its colon before a value (`, "description" "clean"`, `, "timeout" 600000`,
    /// `, description "clean"`), and any name in a spelling the member grammar cannot read
    /// (see [`Self::unreadable_key_at`]). Mid-line, a quoted declared name before a scalar that
    /// ends the member (`sleep 10 "timeout" 600000`).
    pub(super) fn key_in_text_at(&self, pos: usize, spot: Spot) -> Option<KeyAt> {
        if let Some(key) = self.key_at(pos, true) {
            return Some(key);
        }
        if self.frames.is_empty() {
            return None;
        }
        let at_boundary = matches!(spot, Spot::Comma | Spot::LineStart);
        let cjk_text = || spot == Spot::LineStart && self.cjk_line_at(pos);
        if let Some(after_colon) = self.unreadable_key_at(pos).filter(|_| at_boundary && !cjk_text()) {
            return Some(KeyAt { after_colon, strong: false, quoted: false, colon: true, readable: false });
        }
        let bytes = self.src.as_bytes();
        let weak =
            |after_colon, quoted, colon| Some(KeyAt { after_colon, strong: false, quoted, colon, readable: true });
        if let Some(&quote @ (b'"' | b'\'')) = bytes.get(pos) {
            let close = pos + 1 + memchr::memchr2(quote, b'\n', bytes.get(pos + 1..)?)?;
            let declared = self.declares(&self.src[pos + 1..close]);
            let value = self.skip_blank(close + 1);
            let value_starts =
                value > close + 1 && bytes.get(value).is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b':'));
            let whole_value = spot == Spot::MidLine && value > close + 1 && scalar_ends_member(&self.src[value..]);
            return (bytes[close] == quote && declared && (if at_boundary { value_starts } else { whole_value }))
                .then(|| weak(value, true, false))?;
        }
        let len = self.key_word_len(pos);
        let has_letter = self.src[pos..pos + len].chars().any(char::is_alphabetic);
        let colon = self.skip_blank(pos + len);
        let spaced_colon = colon == pos + len || !self.src[pos + len..colon].contains(is_line_break);
        // `a::b`, a scheme's `://`, a drive letter's `C:\` or `C:/`; `cwd:/repo` may be a key.
        let tail = &self.src[colon..];
        let starts_path = tail.starts_with("::")
            || tail.starts_with("://")
            || (len == 1 && (tail.starts_with(":\\") || tail.starts_with(":/")));
        if len > 0 && has_letter && spaced_colon && bytes.get(colon) == Some(&b':') && !starts_path {
            return weak(colon + 1, false, true);
        }
        // `, description "clean"`, `, timeout 600000`: a declared word that lost its colon.
        self.lost_colon_at(pos).filter(|_| at_boundary).and_then(|value| weak(value, false, false))
    }

    /// A CJK line at `pos`: a word the object does not declare, a FULLWIDTH COLON and prose
    /// (`作者：张三`, `Author：张三`), not a scalar that ends a member (`删除：true`).
    fn cjk_line_at(&self, pos: usize) -> bool {
        let len = self.key_word_len(pos);
        let name = &self.src[pos..pos + len];
        let Some(value) = self.src[pos + len..].strip_prefix('\u{FF1A}') else {
            return false;
        };
        let cjk = name.chars().any(is_cjk) || value.trim_start_matches(is_inline_blank).starts_with(is_cjk);
        len > 0 && cjk && !self.declares(name) && !scalar_ends_member(value)
    }

    /// The length of a key word at `pos` (possibly 0).
    fn key_word_len(&self, pos: usize) -> usize {
        let rest = &self.src[pos..];
        rest.find(|c: char| !is_key_char(c)).unwrap_or(rest.len())
    }

    /// A member's shape at `pos` that the member grammar cannot read: a name quoted twice
    /// (`""dry_run": true`), decorated as in prose or other syntaxes (`@dry_run:`,
    /// `` `dry_run`: ``, `**dry_run:**`, `“dry_run”:`, `[dry_run]:` for a declared name),
    /// with an invisible character inside, or followed by a colon spelled another way
    /// (`dry_run::yes`, `dry_run\u{2236} true`, `"timeout"=600000`, `dry_run=yes`). Any value
    /// may follow, a bare word too, but for `=` (see [`OddColon::Equals`]). Where its colon ends.
    pub(super) fn unreadable_key_at(&self, pos: usize) -> Option<usize> {
        let rest = &self.src[pos..];
        if rest.starts_with("\"\"") || rest.starts_with("''") {
            return self.key_at(pos + 1, true).map(|key| key.after_colon);
        }
        let spelled = self.spelled_name_at(pos)?;
        if spelled.decoration == Decoration::Weak && !self.declares(spelled.name) {
            return None;
        }
        if spelled.colon_inside {
            // `"Usage:" foo` is a quoted phrase: `"dry_run:" true` a member's shape.
            let phrase = spelled.decoration == Decoration::Quoted
                && !self.declares(spelled.name)
                && !scalar_ends_member(&self.src[spelled.end..]);
            return (!phrase).then_some(spelled.end);
        }
        let decorated = matches!(spelled.decoration, Decoration::Strong | Decoration::Weak);
        let after = &self.src[spelled.end..];
        let plain = after.trim_start_matches(is_inline_blank);
        if let Some(len) = colon_like_len(plain).filter(|_| decorated) {
            return Some(self.src.len() - plain.len() + len);
        }
        let (len, colon) = odd_colon(after)?;
        let value = &after[len..];
        let member = match colon {
            OddColon::Double | OddColon::LookAlike => value_follows(value),
            OddColon::Equals => {
                // `--set a=1,b=2` right after a comma, `A=1` on a line of a heredoc or a
                // script: `=` there is an assignment unless the name is a declared key.
                let before = &self.src[..pos];
                let assigns =
                    before.ends_with(',') || before.trim_end_matches(is_inline_blank).ends_with(is_line_break);
                let declared = self.declares(spelled.name);
                let listed = !decorated && assigns && !declared;
                !listed && (scalar_ends_member(value) || word_ends_member(value) || (declared && value_follows(value)))
            }
        };
        member.then_some(spelled.end + len)
    }

    /// A name spelled at `pos` — quoted (`"x"`, `'x'`), decorated (see [`DECORATIONS`]), or a
    /// bare word with a letter —: the name, where its spelling ends, how it is decorated.
    fn spelled_name_at(&self, pos: usize) -> Option<Spelled<'_>> {
        self.spelled_within(pos, MAX_NESTED_DECORATIONS)
    }

    /// [`Self::spelled_name_at`] with up to `depth` decorations one inside another
    /// (`**`dry_run`**:`, ``@`dry_run`:``).
    fn spelled_within(&self, pos: usize, depth: usize) -> Option<Spelled<'_>> {
        let rest = &self.src[pos..];
        let first = *rest.as_bytes().first()?;
        if matches!(first, b'"' | b'\'') {
            let close = pos + 1 + memchr::memchr2(first, b'\n', &rest.as_bytes()[1..])?;
            let quoted = &self.src[pos + 1..close];
            // `"dry_run:" true`: the colon inside the quotes.
            let (name, colon_inside) = match quoted.char_indices().next_back() {
                Some((at, c)) if is_colon_like(c) && is_key_word(&quoted[..at]) => (&quoted[..at], true),
                _ => (quoted, false),
            };
            let decoration = if name.chars().any(is_invisible) { Decoration::Strong } else { Decoration::Quoted };
            return (self.src.as_bytes()[close] == first).then_some(Spelled {
                name,
                end: close + 1,
                decoration,
                colon_inside,
            });
        }
        // Only these bytes start a decoration: most words need no look at the table.
        let may_be_decorated = depth > 0
            && (first >= 0xC2
                || matches!(first, b'*' | b'`' | b'@' | b'~' | b'[' | b'(' | b'<' | b'{' | b'#' | b':' | b'$' | b'%'));
        let openings = if may_be_decorated { Some(openings(rest)) } else { None };
        for opening in openings.into_iter().flatten() {
            let start = pos + opening.len;
            let pairs = opening.close.pairs();
            let blanks = if pairs { decoration_blanks_len(&self.src[start..]) } else { 0 };
            let Some(inner) = self.spelled_within(start + blanks, depth - 1) else { continue };
            // `{"timeout": 30}` is JSON inside text: its quoted key is the scan's to walk.
            let decoration = match inner.decoration {
                _ if opening.marks == Marks::AnyName => Decoration::Strong,
                _ if opening.marks == Marks::KeyShaped && is_key_spelling(inner.name) => Decoration::Strong,
                Decoration::Plain => Decoration::Weak,
                inner => inner,
            };
            let after = &self.src[inner.end..];
            let close_at = |text: &str| {
                let blanks = if pairs { decoration_blanks_len(text) } else { 0 };
                opening.close.len_at(&text[blanks..]).map(|len| blanks + len)
            };
            let colon = colon_like_len(after).filter(|_| !inner.colon_inside);
            // `**dry_run:**`: the colon inside the decoration.
            let inside = colon.filter(|_| pairs).and_then(|len| Some((len, close_at(&after[len..])?)));
            let (colon, close) = match inside.or_else(|| Some((0, close_at(after)?))) {
                Some(found) => found,
                // A decoration left open before a name and its colon (``dev `dry_run: true``, a
                // whole member in backticks): the name is still a key's. An element's tag holds
                // text (`<li>content: the text</li>`).
                None if colon.is_some() && blanks == 0 && !matches!(opening.close, Close::Tag(_)) => {
                    let decoration = if opening.marks == Marks::KeyShaped { decoration } else { Decoration::Strong };
                    return Some(Spelled { end: inner.end, decoration, ..inner });
                }
                None => continue,
            };
            let end = inner.end + colon + close;
            return Some(Spelled { name: inner.name, end, decoration, colon_inside: inner.colon_inside || colon > 0 });
        }
        let end = pos + self.key_word_len(pos);
        let name = &self.src[pos..end];
        let decoration = if name.chars().any(is_invisible) { Decoration::Strong } else { Decoration::Plain };
        name.chars().any(char::is_alphabetic).then_some(Spelled { name, end, decoration, colon_inside: false })
    }

    /// Whether the object at hand declares `name`, its invisible characters left out (and its
    /// leading dashes: `--dry_run` names `dry_run`).
    fn declares(&self, name: &str) -> bool {
        let name = visible(name);
        let undashed = name.trim_start_matches('-');
        let names = |keys: &[&str]| keys.iter().any(|key| *key == name || *key == undashed);
        if self.frames.is_empty() {
            self.shapes.known_keys(self.shapes.root()).is_some_and(|keys| names(&keys))
        } else {
            self.object_keys().is_some_and(names)
        }
    }

    /// A declared word that lost its colon before a value at `pos` (`, description "clean"`,
    /// `, timeout 600000`, `[build, force true]`): where the value starts.
    pub(super) fn lost_colon_at(&self, pos: usize) -> Option<usize> {
        let bytes = self.src.as_bytes();
        let len = self.key_word_len(pos);
        let value = self.skip_blank(pos + len);
        let value_starts =
            value > pos + len && bytes.get(value).is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b':'));
        (len > 0 && value_starts && self.declares(&self.src[pos..pos + len])).then_some(value)
    }

    /// Whether the bare text from `start` to `end` holds a member's shape where the scan of a
    /// run does not look: after a shell separator (`dist;dry_run:yes`, `a && dry_run: true`),
    /// mid-line after a blank (`sleep 10 timeout: 600000`, ``TODO `glob`: *.rs``,
    /// `npm run dev {run_in_background: true}`), or in Claude's own XML
    /// (`<parameter name="timeout">`).
    pub(super) fn key_shaped_inside(&self, start: usize, end: usize) -> bool {
        let text = &self.src[start..end];
        let bytes = text.as_bytes();
        // Every shape looked for holds `:`, `=`, `<` or a colon look-alike (not ASCII).
        if !bytes.iter().any(|&b| matches!(b, b':' | b'=' | b'<') || !b.is_ascii()) {
            return false;
        }
        let one_line = OnceCell::new();
        let one_line = || *one_line.get_or_init(|| !text.contains(is_line_break));
        let mut after_separator = false;
        // After a CJK or Arabic comma or semicolon (see `separated_key_at`).
        let mut after_prose_separator = false;
        let mut after_blank = false;
        let mut i = 0;
        while i < bytes.len() {
            if !after_separator && !after_blank {
                // Up to the next blank, separator, quote or `<` nothing is looked at.
                let special = |b: &u8| matches!(b, b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b'"' | b'\'' | b'<');
                match bytes[i..].iter().position(|b| special(b) || !b.is_ascii()) {
                    Some(skip) => i += skip,
                    None => break,
                }
            }
            let Some(c) = text[i..].chars().next() else { break };
            let at = start + i;
            if c == '<' && self.declared_parameter_at(at) {
                return true;
            }
            // `dev;"run_in_background": true`: a quoted key glued to a separator is a key's
            // spelling, not a quoted stretch.
            if after_separator && matches!(c, '"' | '\'') && self.quoted_key_spelled_at(at) {
                return true;
            }
            // `sleep 10 "timeout"\u{FF1A}600000`: no scan of the run walks an odd colon.
            if after_blank && !after_separator && matches!(c, '"' | '\'') && self.mid_line_key_at(at, &one_line) {
                return true;
            }
            // Inside a quoted stretch on one line (`git commit -m "fix: timeout: 0"`), as for
            // the scan of the run, no key is looked for — unless it spans a member.
            if let Some(after) = matches!(c, '"' | '\'').then(|| self.text_quote_at(at, start)).flatten() {
                if self.stretch_spans_member(at, after) {
                    return true;
                }
                (i, after_separator, after_blank) = (after.min(end) - start, false, false);
                continue;
            }
            // A lone `&` glued to words is a URL's query (`?q=x&hl=en`), not a shell's `&`. CJK
            // and Arabic text put no blank after their commas and semicolons (`bar、key：v`).
            let class = punctuation(c);
            let prose_separator = class == Some(Punctuation::Separator);
            let separator =
                matches!(c, ';' | '|' | '(') || (c == '&' && !is_query_ampersand(bytes, i)) || prose_separator;
            // `.timeout: 5` in a jq filter, `$x: 1`: a path or a variable, not a name.
            let word_starts = !matches!(c, '.' | '$') && !separator && !is_inline_blank(c);
            let shaped = word_starts
                && ((after_separator && self.separated_key_at(at, after_prose_separator))
                    || (after_blank && !after_separator && self.mid_line_key_at(at, &one_line)));
            if shaped {
                return true;
            }
            after_separator = separator || (after_separator && is_inline_blank(c));
            after_prose_separator = prose_separator || (after_prose_separator && is_inline_blank(c));
            // Nor after a wide full stop: `。key:` is `. key:`.
            after_blank = is_inline_blank(c) || class == Some(Punctuation::FullStop);
            i += c.len_utf8();
        }
        false
    }

    /// Whether a member's whole bare value from `start` to `end` starts with a member's shape,
    /// as a run does mid-line after a blank (see [`Self::mid_line_key_at`]): `"new_string":
    /// replace_all: true`, `"path": path_glob: "src/**"` may be a member whose value was lost
    /// as much as text. (`fix: handle it`, `localhost:8080` stay text.)
    pub(super) fn member_shape_starts(&self, start: usize, end: usize) -> bool {
        let text = &self.src[start..end];
        let one_line = OnceCell::new();
        let one_line = || *one_line.get_or_init(|| !text.contains(is_line_break));
        text.starts_with(|c: char| !matches!(c, '.' | '$')) && self.mid_line_key_at(start, &one_line)
    }

    /// A quoted name and its colon at `pos` (`"dry_run": true`, `'timeout'\u{FF1A}5`).
    fn quoted_key_spelled_at(&self, pos: usize) -> bool {
        self.key_at(pos, false).is_some_and(|key| key.quoted) || self.unreadable_key_at(pos).is_some()
    }

    /// Whether the single-quoted stretch from `at` to `end` spans a member: a comma before a
    /// quoted key or a declared word and its colon, or a closer before a quoted key
    /// (`'api, branch: main, env: users'`, `'a}, {"old_string": … users'`). A `'` closes at a
    /// possessive as well (`users'`) and no parity tells the stretch from members; a stretch in
    /// double quotes that spans a member leaves the member reading an odd `"`.
    fn stretch_spans_member(&self, at: usize, end: usize) -> bool {
        let bytes = self.src.as_bytes();
        if bytes[at] != b'\'' {
            return false;
        }
        // What brackets opened inside the stretch hold is theirs (`'{"a": 1, "b": 2}'`).
        let mut depth = 0usize;
        for (i, &byte) in bytes.iter().enumerate().take(end - 1).skip(at + 1) {
            match byte {
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth > 0 => depth -= 1,
                b'}' | b']' if self.member_follows_closer(i) => return true,
                b',' if depth == 0 => {
                    let q = self.skip_blank(i + 1);
                    if q < end - 1 && self.key_at(q, true).is_some() {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// Whether a member follows the closer at `pos`, as if it closed containers: a few more
    /// closers, a comma, perhaps an object's `{`, and a quoted key (`}, {"old_string":`).
    fn member_follows_closer(&self, pos: usize) -> bool {
        let bytes = self.src.as_bytes();
        let mut q = self.skip_blank(pos + 1);
        for _ in 0..MAX_CLOSERS_BEFORE_MEMBER {
            if !bytes.get(q).copied().is_some_and(is_closer) {
                break;
            }
            q = self.skip_blank(q + 1);
        }
        if bytes.get(q) != Some(&b',') {
            return false;
        }
        q = self.skip_blank(q + 1);
        if bytes.get(q) == Some(&b'{') {
            q = self.skip_blank(q + 1);
        }
        self.key_at(q, false).is_some_and(|key| key.quoted)
    }

    /// A member's shape right after a shell separator: an unreadable spelling, or a word, `:`
    /// and any value that starts no path (`host:/x`, `a::b`, `C:\`). After a CJK or Arabic
    /// comma or semicolon (`prose`), only for a name spelled as keys are or a declared one: a
    /// word of the script before a colon is the text's (`注意，错误：文件不存在`).
    fn separated_key_at(&self, pos: usize, prose: bool) -> bool {
        let key_named = |spelled: Spelled<'_>| is_key_spelling(spelled.name) || self.declares(spelled.name);
        if prose && !self.spelled_name_at(pos).is_some_and(key_named) {
            return false;
        }
        if self.unreadable_key_at(pos).is_some() {
            return true;
        }
        let len = self.key_word_len(pos);
        let after = &self.src[pos + len..];
        let starts_path = after.starts_with("::") || after.starts_with(":/") || (len == 1 && after.starts_with(":\\"));
        len > 0
            && self.src[pos..pos + len].chars().any(char::is_alphabetic)
            && after.starts_with(':')
            && !starts_path
            && value_follows(&after[1..])
    }

    /// A member's shape mid-line, after a blank: a decorated name and a colon before any value
    /// for a declared name, before a scalar (or, in a one-line value, a word that ends the
    /// member) for another; a plain word, a colon, a blank and a scalar. (`=` mid-line is a
    /// shell's: `export timeout=5`, `--timeout=5`.)
    fn mid_line_key_at(&self, pos: usize, one_line: &dyn Fn() -> bool) -> bool {
        let Some(spelled) = self.spelled_name_at(pos) else {
            return false;
        };
        let after = &self.src[spelled.end..];
        if after.starts_with("://") {
            // `<https://x.y|link>`, `**http**://`: a URL's scheme, however decorated.
            return false;
        }
        let plain = after.trim_start_matches(is_inline_blank);
        let value = match colon_like_len(plain) {
            _ if spelled.colon_inside => after,
            Some(len) => &plain[len..],
            None => return false,
        };
        match spelled.decoration {
            // A name in ASCII quotes and `:` is a key the scan of the run walks both ways; a
            // declared one before an odd colon is a member's shape it cannot read.
            Decoration::Quoted => glued_odd_colon_member(plain) && self.declares(spelled.name),
            // `fix: handle it` is prose; `timeout: 600000` a member's shape, and so is a
            // declared name's odd colon glued to its value (`timeout\u{FF1A}600000`).
            Decoration::Plain => {
                (plain.len() == after.len() && value.starts_with(is_inline_blank) && json_value_starts(value))
                    || (glued_odd_colon_member(after) && self.declares(spelled.name))
            }
            Decoration::Weak => self.declares(spelled.name) && value_follows(value),
            _ if self.declares(spelled.name) => value_follows(value),
            // An undeclared name before more words, or in Markdown lines, is prose
            // (``use `foo`: it lists``, ``- `retries`: count``).
            _ => json_value_starts(value) || (word_ends_member(value) && one_line()),
        }
    }

    /// Claude's own syntax for a tool call's argument, leaked into a value, naming a declared
    /// key at `pos`: `<parameter name="key">` in any case, with a namespace, blanks around `=`
    /// or no quotes, or the element form `<key>…</key>`.
    fn declared_parameter_at(&self, pos: usize) -> bool {
        // A tag and an element's value are short: nothing past this is read, so many `<` in a
        // long value cost no more than one each.
        let window = &self.src.as_bytes()[pos..self.src.len().min(pos + MAX_PARAMETER_TAG)];
        let window = &self.src[pos..pos + std::str::from_utf8(window).map_or_else(|e| e.valid_up_to(), str::len)];
        let Some(tag) = window.strip_prefix('<') else {
            return false;
        };
        let name_len = tag.find(|c: char| c.is_whitespace() || c == '>' || c == '/').unwrap_or(tag.len());
        let qualified = &tag[..name_len];
        let local = qualified.rsplit_once(':').map_or(qualified, |(_, local)| local);
        let attributes = &tag[name_len..];
        if local.eq_ignore_ascii_case("parameter") {
            return parameter_name(attributes).is_some_and(|name| self.declares(name));
        }
        // `<replace_all>true</replace_all>`: an element named for a declared key, closed later.
        attributes.starts_with('>')
            && !local.is_empty()
            && self.declares(local)
            && window.contains(&format!("</{qualified}>"))
    }

    /// An unquoted name the object declares, followed by `:`, at `pos` (mid-line, after a blank:
    /// `npm run dev; run_in_background: true`).
    pub(super) fn declared_word_key_at(&self, pos: usize) -> bool {
        let Some(len) = self.unquoted_key_len(pos) else {
            return false;
        };
        let word = &self.src[pos..pos + len];
        self.declared_keys().is_some_and(|keys| keys.contains(&word)) && self.key_at(pos, true).is_some()
    }

    /// The length of an unquoted key at `pos`: an identifier, or a name the object declares
    /// spelled out (`-i`, `-C`, `x-y`: declared names need not be identifiers).
    pub(super) fn unquoted_key_len(&self, pos: usize) -> Option<usize> {
        let rest = &self.src[pos..];
        let declared = self.declared_keys().into_iter().flatten().filter(|key| {
            rest.starts_with(*key)
                && rest[key.len()..].trim_start_matches([' ', '\t']).starts_with(':')
                && lexeme::identifier_len(key) != Some(key.len())
        });
        declared.map(str::len).max().or_else(|| lexeme::identifier_len(rest)).or_else(|| {
            // `--dry-run:` — a word of a key's shape followed by a colon.
            let len =
                rest.bytes().position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'$' | b'.')))?;
            let shaped = len > 0 && rest[..len].bytes().any(|b| b.is_ascii_alphabetic());
            (shaped && rest[len..].trim_start_matches([' ', '\t']).starts_with(':')).then_some(len)
        })
    }

    /// A declared key missing one of its quotes: `name":` (the opening lost) or `"name:` (the
    /// closing lost, the string it starts not followed by a colon); or with quotes that do not
    /// match (`'name":`, `"name':`). The name and where the key ends (at the colon).
    pub(super) fn damaged_key(&self, pos: usize) -> Option<(&str, usize)> {
        let bytes = self.src.as_bytes();
        // Where the name starts, and which closing quote it needs (`None`: none or a `'`).
        let (start, closing) = match bytes.get(pos)? {
            b'"' if self.intact_quoted_key(pos).is_none() => (pos + 1, None),
            b'"' => return None,
            b'\'' => (pos + 1, Some(b'"')),
            _ => (pos, Some(b'"')),
        };
        let len = lexeme::identifier_len(&self.src[start..])?;
        let name = &self.src[start..start + len];
        let mut end = start + len;
        match closing {
            Some(quote) if bytes.get(end) != Some(&quote) => return None,
            Some(_) => end += 1,
            None if bytes.get(end) == Some(&b'\'') => end += 1,
            None => {}
        }
        let colon = self.skip_ws_quiet(end);
        let declared = self.declared_keys().is_some_and(|keys| keys.contains(&name));
        (declared && bytes.get(colon) == Some(&b':')).then_some((name, end))
    }

    /// A declared key whose colon was typed inside its quotes (`"timeout:" 30`), in an object
    /// that takes no other name (where it does, `"timeout:"` may be a name that lost its
    /// colon): the name and where the key ends, past its closing quote.
    pub(super) fn colon_inside_key(&self, pos: usize) -> Option<(&str, usize)> {
        let bytes = self.src.as_bytes();
        let quote = *bytes.get(pos).filter(|b| matches!(b, b'"' | b'\''))?;
        let close = pos + 1 + memchr::memchr2(quote, b'\n', bytes.get(pos + 1..)?)?;
        let name = self.src[pos + 1..close].strip_suffix(':').filter(|_| bytes[close] == quote)?;
        let closed = self.frames.last().is_some_and(|f| f.kind == FrameKind::Object && !f.open);
        let value = self.skip_blank(close + 1);
        let value_starts = bytes.get(value).is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b':'));
        let declared = self.object_keys().is_some_and(|keys| keys.contains(&name));
        (closed && declared && value_starts).then_some((name, close + 1))
    }

    /// The keys the object at hand declares (the root's before it opens).
    fn declared_keys(&self) -> Option<Vec<&str>> {
        if self.frames.is_empty() {
            self.shapes.known_keys(self.shapes.root())
        } else {
            self.object_keys().map(<[_]>::to_vec)
        }
    }

    /// `"…"` then `:`: a quoted key with both quotes.
    fn intact_quoted_key(&self, pos: usize) -> Option<usize> {
        let bytes = self.src.as_bytes();
        let limit = (pos + 1 + MAX_KEY_LOOKAHEAD).min(bytes.len());
        let close = bytes[pos + 1..limit].iter().position(|&b| b == b'"' || b == b'\n').map(|i| pos + 1 + i)?;
        (bytes[close] == b'"' && bytes.get(self.skip_ws_quiet(close + 1)) == Some(&b':')).then_some(close + 1)
    }

    /// Whether the root object starts again at `pos` (a `{` right after one of its members).
    pub(super) fn restarts_at(&self, pos: usize) -> bool {
        self.frames.len() == 1 && self.byte_at(pos) == Some(b'{')
    }

    /// Whether the key at `pos`, inside a nested object, is one an enclosing object takes (the
    /// parent, or further out: two closers may be lost): one it declares, or any name where its
    /// schema lets undeclared members through (`{"filters": {"lang": "rust", "limit": 10, …`
    /// under an open top level: `limit` may be the top level's). The key's name, if so.
    pub(super) fn ancestor_takes_key_at(&self, pos: usize) -> Option<&'s str> {
        let ancestors: Vec<&Frame<'_>> = self
            .frames
            .iter()
            .rev()
            .filter(|f| f.kind == FrameKind::Object)
            .skip(1)
            .filter(|f| f.keys.is_some())
            .collect();
        if ancestors.is_empty() {
            return None;
        }
        let bytes = self.src.as_bytes();
        let name = match bytes.get(pos) {
            Some(&quote @ (b'"' | b'\'')) => {
                let len = bytes.get(pos + 1..).and_then(|rest| rest.iter().position(|&b| b == quote || b == b'\n'))?;
                &self.src[pos + 1..pos + 1 + len]
            }
            _ => match self.unquoted_key_len(pos) {
                Some(len) => &self.src[pos..pos + len],
                None => return None,
            },
        };
        let takes = ancestors.iter().any(|f| f.open || f.keys.as_ref().is_some_and(|keys| keys.contains(&name)));
        takes.then_some(name)
    }

    /// A closer that closes nothing open inside an object (`["a"]], "b": 1`): where it ends,
    /// if what follows it continues the object.
    pub(super) fn stray_closer_at(&self, pos: usize) -> Option<usize> {
        if self.byte_at(pos) != Some(b']') || self.frames.iter().any(|f| f.kind != FrameKind::Object) {
            return None;
        }
        let next = self.skip_ws_quiet(pos + 1);
        match self.byte_at(next) {
            Some(b',') => {
                let q = self.skip_ws_quiet(next + 1);
                self.key_colon_at(q, true).is_some().then_some(pos + 1)
            }
            Some(b'}') => Some(pos + 1),
            _ => None,
        }
    }

    /// Whether the innermost container is an array written as `(…)`.
    pub(super) fn in_tuple(&self) -> bool {
        self.frames.last().is_some_and(|f| f.paren)
    }

    fn byte_at(&self, pos: usize) -> Option<u8> {
        self.src.as_bytes().get(pos).copied()
    }

    /// A key with both its quotes (or a declared unquoted word) followed by `:`.
    /// After blanks from `pos`, a CJK input method's comma, then a quoted name the object
    /// declares (or any, where it declares none) and a colon of either width:
    /// `30，"command"："ls"`. Only after a scalar or a bare run: inside a string the same
    /// text may be the string's own (see the string's wide-separator refusal).
    pub(super) fn wide_comma_before_key(&self, pos: usize) -> bool {
        let at = self.skip_blank(pos);
        let Some(rest) = self.src[at..].strip_prefix('\u{FF0C}') else {
            return false;
        };
        let q = self.skip_blank(self.src.len() - rest.len());
        let bytes = self.src.as_bytes();
        let Some(&quote @ (b'"' | b'\'')) = bytes.get(q) else {
            return false;
        };
        let limit = (q + 1 + MAX_KEY_LOOKAHEAD).min(bytes.len());
        let Some(close) = bytes[q + 1..limit].iter().position(|&b| b == quote || b == b'\n').map(|i| q + 1 + i) else {
            return false;
        };
        let colon = self.skip_blank(close + 1);
        let colon_follows = self.src[colon..].starts_with('\u{FF1A}')
            || (bytes.get(colon) == Some(&b':') && !self.src[colon..].starts_with("://"));
        bytes[close] == quote && colon_follows && self.is_declared_or_open(&self.src[q + 1..close])
    }

    /// `timeout=30` at `pos`: a name the object declares, `=` and a value glued to it, as the
    /// member reading takes it (`, timeout=30` after a literal: the member, not more text).
    fn declared_key_equals_at(&self, pos: usize) -> bool {
        let Some(len) = lexeme::identifier_len(&self.src[pos..]) else {
            return false;
        };
        let after = &self.src[pos + len..];
        let value_glued = after.strip_prefix('=').and_then(|v| v.chars().next());
        value_glued.is_some_and(|c| !c.is_whitespace() && !matches!(c, '=' | '>' | '"' | '\'' | ',' | '}'))
            && self.declares(&self.src[pos..pos + len])
    }

    pub(super) fn intact_key_at(&self, pos: usize) -> bool {
        self.damaged_key(pos).is_none() && self.key_colon_at(pos, true).is_some()
    }

    /// Whether a quoted `name` is strong structure: the enclosing object declares it, or
    /// declares no names at all (no schema to tell).
    fn is_declared_or_open(&self, name: &str) -> bool {
        let keys = if self.frames.is_empty() {
            self.shapes.known_keys(self.shapes.root())
        } else {
            self.object_keys().map(<[_]>::to_vec)
        };
        keys.is_none_or(|keys| keys.contains(&name))
    }

    fn is_known_key(&self, word: &str) -> bool {
        if self.frames.is_empty() {
            // Before the root object opens, its own keys are the ones that count.
            return self.shapes.known_keys(self.shapes.root()).is_some_and(|keys| keys.contains(&word));
        }
        let open = self.frames.iter().rev().find(|f| f.kind == FrameKind::Object).is_some_and(|f| f.open);
        match self.object_keys() {
            Some(keys) => open || keys.contains(&word),
            None => true,
        }
    }

    /// Skips spaces and line breaks only: inside bare text a comment marker or an escape is a
    /// choice of its own, never skipped silently.
    pub(super) fn skip_blank(&self, mut pos: usize) -> usize {
        while pos < self.src.len() {
            let rest = &self.src[pos..];
            let blank = || rest.chars().next().filter(|&c| is_blank(c)).map(char::len_utf8);
            match lexeme::whitespace_len(rest).or_else(blank) {
                Some(len) => pos += len,
                None => break,
            }
        }
        pos
    }

    /// A quoted stretch inside bare text, starting at `at`: a double quote closed on the same
    /// line, or a single quote that opens a word (`'a b'`, not `it's`). Where it ends.
    pub(super) fn quoted_stretch(&self, at: usize, run_start: usize) -> Option<usize> {
        let bytes = self.src.as_bytes();
        let quote = bytes[at];
        if quote == b'\'' && at > run_start && !bytes[at - 1].is_ascii_whitespace() {
            return None;
        }
        let close = bytes[at + 1..].iter().position(|&b| b == quote || b == b'\n').map(|n| at + 1 + n)?;
        if bytes[close] != quote || (quote == b'\'' && bytes.get(close + 1).is_some_and(u8::is_ascii_alphanumeric)) {
            return None;
        }
        Some(close + 1)
    }

    /// A quoted stretch of text at `at` (see [`Self::quoted_stretch`]), where it ends. A quote
    /// right before `, key` opens none: it may close the value (`npm run dev", ""dry_run": true`).
    pub(super) fn text_quote_at(&self, at: usize, run_start: usize) -> Option<usize> {
        let comma_key_follows = self.src.as_bytes().get(at + 1) == Some(&b',')
            && self.key_in_text_at(self.skip_blank(at + 2), Spot::Comma).is_some();
        self.quoted_stretch(at, run_start).filter(|_| !comma_key_follows)
    }

    /// Whether the root object may start again at the `{` at `pos`: one of its quoted keys
    /// follows.
    pub(super) fn restart_may_begin(&self, pos: usize) -> bool {
        if self.frames.len() != 1 || self.innermost() != Some(FrameKind::Object) {
            return false;
        }
        let q = self.skip_blank(pos + 1);
        self.key_at(q, false).is_some_and(|key| key.quoted && key.strong)
    }

    /// Whether a value may end at `pos`: what follows continues the enclosing container.
    pub(super) fn value_ends_at(&self, pos: usize) -> bool {
        self.value_ends_after(pos, true)
    }

    /// [`Self::value_ends_at`], with comments between the value and what follows it skipped
    /// (`comments`) or read as text.
    pub(super) fn value_ends_after(&self, pos: usize, comments: bool) -> bool {
        let bytes = self.src.as_bytes();
        let p = if comments { self.skip_ws_quiet(pos) } else { self.skip_blank(pos) };
        let Some(&byte) = bytes.get(p) else {
            return true;
        };
        let in_object = self.innermost() == Some(FrameKind::Object);
        match byte {
            b',' if in_object => {
                let q = self.skip_ws_quiet(p + 1);
                q >= bytes.len() || is_closer(bytes[q]) || self.intact_key_at(q) || self.declared_key_equals_at(q)
            }
            b',' => true,
            // A CJK input method's comma, as `,` (see the parser's WIDE_COMMA).
            _ if self.src[p..].starts_with('\u{FF0C}') => {
                let q = self.skip_ws_quiet(p + '\u{FF0C}'.len_utf8());
                !in_object || q >= bytes.len() || is_closer(bytes[q]) || self.intact_key_at(q)
            }
            b'}' | b']' => self.closer_ok(p),
            b'{' if in_object && self.frames.len() == 1 => true,
            b')' => self.in_tuple(),
            // A wrapper's close ends the value as the input's end does.
            _ if self.wrapper_closes_at(p) => true,
            _ => {
                let newline = self.src[pos..p].contains('\n');
                // A damaged key (`description":`) never ends a value by itself: the quote may
                // be this value's own closing one (`"rm -rf build, "description": …`).
                self.innermost().is_some() && self.damaged_key(p).is_none() && self.key_colon_at(p, newline).is_some()
            }
        }
    }

    /// Whether the closer at `pos` can end the innermost container: what follows it continues
    /// the parent (or, at the top, is the end or a recognized wrapper's end).
    pub(super) fn closer_ok(&self, pos: usize) -> bool {
        let bytes = self.src.as_bytes();
        let r = self.skip_ws_quiet(pos + 1);
        let Some(&next) = bytes.get(r) else {
            return true;
        };
        if matches!(next, b',' | b'}' | b']') {
            return true;
        }
        let outer_frames = self.frames.iter().filter(|f| f.kind != FrameKind::List).count();
        let rest = &self.src[r..];
        // Deeper in, a wrapper's close ends what is open as the input's end does.
        (outer_frames <= 1
            && (next == b'{' || (wrapper::suffix(rest, self.opened, self.tool) && self.names_no_key(rest))))
            || self.wrapper_closes_at(r)
    }

    /// Text around the object that names none of its keys with a `key:`.
    pub(super) fn names_no_key(&self, text: &str) -> bool {
        let keys = self.shapes.known_keys(self.shapes.root());
        if let Some(keys) = &keys {
            if names_a_key_loosely(text, keys) {
                return false;
            }
        }
        let bytes = text.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            if let Some(len) = lexeme::identifier_len(&text[start..]) {
                let word = &text[start..start + len];
                let after = text[start + len..].trim_start_matches([' ', '\t']);
                if let Some(value) = after.strip_prefix(':') {
                    // `Here is the command:` right before the object presents it; `timeout: 5`
                    // states a value.
                    let names_key = !value.trim().is_empty() && keys.as_ref().is_none_or(|keys| keys.contains(&word));
                    if names_key {
                        return false;
                    }
                }
                start += len;
            } else {
                start += text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        true
    }
}

/// Whether a phrase right before a `:` in `text` is one of `keys` written another way
/// (`Timeout:`, `REPLACE ALL:`, `run-in-background:`): case, blanks, `_` and `-` aside.
fn names_a_key_loosely(text: &str, keys: &[&str]) -> bool {
    let loose = |s: &str| -> String {
        s.chars().filter(|c| !matches!(c, ' ' | '\t' | '_' | '-')).flat_map(char::to_lowercase).collect()
    };
    let wanted: Vec<String> = keys.iter().map(|k| loose(k)).filter(|k| !k.is_empty()).collect();
    text.match_indices(':').any(|(colon, _)| {
        // `Here is the command:` presents the call; `Timeout: 600000.` states a value.
        if text[colon + 1..].trim().is_empty() {
            return false;
        }
        let before = &text[..colon];
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || matches!(c, ' ' | '\t' | '_' | '-')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let phrase = loose(&before[start..]);
        // The phrase's last words: `Then set Timeout:` names `timeout`.
        wanted.iter().any(|key| !phrase.is_empty() && phrase.ends_with(key.as_str()))
    })
}

/// How far a parameter tag (`<parameter name="…">`, `<key>value</key>`) is looked for.
const MAX_PARAMETER_TAG: usize = 512;

/// The value of a tag's `name` attribute (any case, blanks around `=`, quoted or not).
fn parameter_name(attributes: &str) -> Option<&str> {
    let lower = attributes.to_ascii_lowercase();
    let at = lower.match_indices("name").find(|(at, _)| {
        attributes[..*at].ends_with(char::is_whitespace) && attributes[at + 4..].trim_start().starts_with('=')
    })?;
    let value = attributes[at.0 + 4..].trim_start().strip_prefix('=')?.trim_start();
    match value.chars().next()? {
        quote @ ('"' | '\'') => value[1..].find(quote).map(|end| &value[1..1 + end]),
        _ => value.split(|c: char| c.is_whitespace() || c == '>' || c == '/').next().filter(|n| !n.is_empty()),
    }
}

/// Whether the `&` at `text[at]` joins a URL's query pairs: in a word that has a `?` before it,
/// glued to a word on both sides (`a && b`, `cmd &`, `dist&x=1` are the shell's).
fn is_query_ampersand(text: &[u8], at: usize) -> bool {
    let glued = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'%' | b'.'));
    let word = &text[..at];
    let word =
        &word[word.iter().rposition(|b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'')).map_or(0, |p| p + 1)..];
    at > 0 && word.contains(&b'?') && glued(text.get(at - 1)) && glued(text.get(at + 1))
}
