//! The recursive part of the lenient grammar: document, object, array, unbracketed list,
//! scalar and bare run. Each rule takes a byte position and returns the node and the position
//! after it; every deviation from JSON is recorded as an edit.

use super::brackets::Brackets;
use super::choices::{Choices, KEEP_AS_TEXT, TAKE_AS_STRUCTURE};
use super::comments::CommentFinder;
use super::literal_syntax;
use super::lookahead::{is_closer, Spot};
use super::production::{Production, ProductionSet};
use super::tree::{Member, Node, NodeKind};
use super::unicode::{is_blank, is_line_break};
use super::wrapper::{self, Opened};
use super::SyntaxError;
use crate::repair::edit::{Edit, EditKind};
use crate::repair::lexeme;
use crate::repair::outcome::RefusalCode;
use crate::schema::{escape_pointer, ShapeId, ShapeSet};
use std::ops::Range;

#[derive(Debug, Clone, Copy)]
pub struct ParseOptions {
    /// Containers nested deeper than this are refused.
    pub max_depth: usize,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self { max_depth: 128 }
    }
}

/// The parse of a whole input: the object, any further top-level objects (duplicates or
/// rivals, for the caller to compare), and the edits.
#[derive(Debug, Clone)]
pub struct Document {
    pub root: Node,
    pub rivals: Vec<Node>,
    pub edits: Vec<Edit>,
    /// The grammar productions this parse used.
    pub productions: ProductionSet,
    /// The keys this reading took from key-shaped text inside a value (weak keys). Should one
    /// of them break the schema, the model may have meant a member the tool does not take: the
    /// text reading is then in doubt too.
    pub text_as_member: Vec<String>,
    /// Where this reading kept a member's shape (`, dry_run: true`, `, @dry_run: true`) as
    /// text: the model may have meant a member, whether or not a member reading parses.
    pub key_kept_as_text: Option<usize>,
    /// Members this reading kept in a nested object whose `}` may be lost before them, where
    /// an enclosing object takes the key too.
    pub kept_in_nested: Vec<KeptMember>,
}

/// A member kept in a nested object where an enclosing one takes its key too.
#[derive(Debug, Clone)]
pub struct KeptMember {
    /// The nested object's pointer.
    pub parent: String,
    pub name: String,
    /// The shape the nested object gives the member's value, where it declares the key.
    pub declared: Option<ShapeId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FrameKind {
    Object,
    Array,
    /// An unbracketed list at an object member's value.
    List,
}

pub(super) struct Frame<'s> {
    pub kind: FrameKind,
    /// Declared keys (objects only); `None` when any key may appear.
    pub keys: Option<Vec<&'s str>>,
    /// An array written as `(…)`: `)` ends its items.
    pub paren: bool,
    /// An object that takes undeclared keys: any unquoted word may be one (weakly).
    pub open: bool,
    /// An object laid out over lines (`{⏎  "a": …⏎}`, or braceless members): its line breaks
    /// around values are formatting. In a one-line object they may be a value's own.
    pub pretty: bool,
    /// The object's shape (objects only): what its members' values may be.
    pub shape: Option<ShapeId>,
    /// The object's `}` may be lost (see [`Parser::object`]).
    pub lost_closer: bool,
}

pub(super) struct Parser<'s> {
    pub src: &'s str,
    pub shapes: &'s ShapeSet,
    pub frames: Vec<Frame<'s>>,
    pub edits: Vec<Edit>,
    pub productions: ProductionSet,
    /// The answers for this parse's choice points (see [`Choices`]).
    pub choices: Choices,
    /// What the dropped prefix opened (a fence, `name(`), for the suffix to close.
    pub opened: Opened,
    /// A prefix (a fence, a tag, a lead-in) was dropped before the object.
    pub(super) wrapped: bool,
    /// Where the wrapper's opening text lies (before the object's `{`).
    wrapper_prefix: std::ops::Range<usize>,
    /// Which bracket closes which (bare text keeps only brackets that pair up).
    pub brackets: Brackets,
    /// The tool's name, when known: call-syntax wrappers must name it.
    pub tool: Option<&'s str>,
    pub comments: CommentFinder,
    /// Where weak keys in bare text were taken as structure (see [`Document::text_as_member`]).
    text_as_member: Vec<usize>,
    /// The names those keys gave.
    text_members: Vec<String>,
    /// Where the first `key:` after a boundary was kept as text (see [`Document::key_kept_as_text`]).
    kept_as_text: Option<usize>,
    /// See [`Document::kept_in_nested`].
    kept_in_nested: Vec<KeptMember>,
    /// Where the bare run being read starts, and its heredocs and quotes read so far.
    run_start: usize,
    shell_quoting: literal_syntax::ShellQuoting,
    /// Where a double-quoted string first held an escape Python reads and JSON lacks.
    python_escape_at: Option<usize>,
    /// Where a written-out escape at a value's start was kept as the value's text.
    escape_kept_at: Option<usize>,
    /// A position and how many `}` the input holds from it on.
    closers_after: Option<(usize, usize)>,
    /// Where the root object's `{` is (none when it is missing).
    pub(super) root_open: Option<usize>,
    /// The root's `{` is missing (`"query": …, "options": {…}`): any `}` may be its closer.
    implicit_root: bool,
    pub(super) path: Vec<String>,
    options: ParseOptions,
}

type Parsed = Result<(Node, usize), SyntaxError>;

fn is_triple_quote(text: &str) -> bool {
    text.starts_with("\"\"\"") || text.starts_with("\'\'\'")
}

/// `u'…'`, `r"…"`, `b'…'`, `f"…"`, `rb'…'`: a whole bare value that is a prefixed Python string.
fn is_prefixed_literal(text: &str) -> bool {
    let body = text.trim_start_matches(['u', 'U', 'r', 'R', 'b', 'B', 'f', 'F']);
    let prefix = text.len() - body.len();
    (1..=2).contains(&prefix)
        && body.len() >= 2
        && matches!(body.as_bytes()[0], b'"' | b'\'')
        && body.as_bytes()[body.len() - 1] == body.as_bytes()[0]
}

/// The full-width colon and comma a CJK input method types for `:` and `,`.
const WIDE_COLON: char = '\u{FF1A}';
pub(super) const WIDE_COMMA: char = '\u{FF0C}';

/// JSON's escapes as unquoted text may hold them written out (`\n`, `\"`, `\\`, `\u00e9`): `\b`
/// and `\f` are left out, being regex and shell text far more often than JSON escapes.
const JSON_ESCAPES: &[u8] = b"ntr\"\\/u";
/// In a string whose inner quotes were written raw, `\b` and `\f` may be the text's own too.
const RAW_STRING_ESCAPES: &[u8] = b"ntr\"\\/ubf";
/// Escapes of control characters: in text whose line breaks were written raw they may be the
/// text's own (`s = 'a\nb'`); an escaped quote or backslash there is JSON's.
const CONTROL_ESCAPES: &[u8] = b"ntrbfu";

/// Whether `text` holds a backslash followed by one of `letters` (`u` only with four hex
/// digits); with `skip_escaped`, not where that backslash follows another.
fn has_escape(text: &str, letters: &[u8], skip_escaped: bool) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'\\'
            && !(skip_escaped && i > 0 && bytes[i - 1] == b'\\')
            && bytes.get(i + 1).is_some_and(|next| letters.contains(next))
            && (bytes[i + 1] != b'u'
                || bytes.get(i + 2..i + 6).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)))
    })
}

/// Text `side` the object that is not a recognized wrapper: it may belong to the call.
fn text_outside(side: &str, at: usize) -> SyntaxError {
    SyntaxError::new(
        RefusalCode::TextOutside,
        format!("text {side} the object is not a recognized wrapper: it may belong to the call"),
        at,
    )
}

/// The first reading of `src`: every choice point takes its first option.
pub fn parse_document(src: &str, shapes: &ShapeSet, options: ParseOptions) -> Result<Document, SyntaxError> {
    parse_reading(src, shapes, options, None, &mut Choices::default())
}

/// The reading of `src` that `choices` scripts; `choices` records the points this parse met.
pub fn parse_reading(
    src: &str,
    shapes: &ShapeSet,
    options: ParseOptions,
    tool: Option<&str>,
    choices: &mut Choices,
) -> Result<Document, SyntaxError> {
    let mut parser = Parser {
        src,
        shapes,
        frames: Vec::new(),
        edits: Vec::new(),
        productions: ProductionSet::default(),
        choices: std::mem::take(choices),
        opened: Opened::default(),
        wrapped: false,
        wrapper_prefix: 0..0,
        brackets: Brackets::of(src),
        tool,
        comments: CommentFinder::default(),
        text_as_member: Vec::new(),
        kept_in_nested: Vec::new(),
        run_start: 0,
        shell_quoting: literal_syntax::ShellQuoting::default(),
        python_escape_at: None,
        text_members: Vec::new(),
        kept_as_text: None,
        escape_kept_at: None,
        closers_after: None,
        root_open: None,
        implicit_root: false,
        path: Vec::new(),
        options,
    };
    let document = parser.document();
    *choices = parser.choices;
    document
}

impl<'s> Parser<'s> {
    pub(super) fn innermost(&self) -> Option<FrameKind> {
        self.frames.last().map(|f| f.kind)
    }

    /// The kind of the container around the innermost one.
    fn parent_kind(&self) -> Option<FrameKind> {
        self.frames.iter().rev().nth(1).map(|f| f.kind)
    }

    pub(super) fn object_keys(&self) -> Option<&[&'s str]> {
        self.frames.iter().rev().find(|f| f.kind == FrameKind::Object).and_then(|f| f.keys.as_deref())
    }

    pub(super) fn pointer(&self) -> String {
        // Built by hand: this runs for every edit of every reading.
        let mut pointer = String::with_capacity(self.path.iter().map(|s| s.len() + 1).sum());
        for segment in &self.path {
            pointer.push('/');
            pointer.push_str(segment);
        }
        pointer
    }

    pub(super) fn hit(&mut self, production: Production) {
        self.productions.insert(production);
    }

    pub(super) fn edit(&mut self, kind: EditKind, span: Range<usize>) {
        let pointer = self.pointer();
        self.edits.push(Edit::new(kind, span, pointer));
    }

    fn error<T>(&self, message: impl Into<String>, at: usize) -> Result<T, SyntaxError> {
        Err(SyntaxError::new(RefusalCode::Syntax, message, at))
    }

    fn byte(&self, pos: usize) -> Option<u8> {
        self.src.as_bytes().get(pos).copied()
    }

    /// Skips whitespace and comments, recording each comment as dropped; and escape sequences
    /// written out between tokens (`,\n  "limit"` with a literal backslash-n).
    fn skip_ws(&mut self, pos: usize) -> usize {
        self.skip_layout(pos, false)
    }

    /// Skips layout outside the object, where a comment is not layout but text around the
    /// object (`/* as root: */ {…}`, `{…} // not yet` may qualify the call): it is left for the
    /// wrapper's rules, which drop only a recognized one.
    fn skip_ws_outside(&mut self, mut pos: usize) -> usize {
        loop {
            pos = self.skip_blank(pos);
            let Some(len) = lexeme::literal_escape_len(&self.src[pos..]) else {
                return pos;
            };
            self.hit(Production::LiteralEscape);
            self.edit(EditKind::DropLiteralEscape, pos..pos + len);
            pos += len;
        }
    }

    /// Skips whitespace and comments where a value starts. A comment marker there may be text
    /// (`/*/src/*.py` is a glob), and so may a written-out escape (`"path": \new\file`): each is
    /// a choice point, dropped or the value's start.
    fn skip_ws_before_value(&mut self, pos: usize) -> usize {
        self.skip_layout(pos, true)
    }

    fn skip_layout(&mut self, mut pos: usize, value_starts: bool) -> usize {
        loop {
            let rest = &self.src[pos..];
            if let Some(len) = lexeme::whitespace_len(rest) {
                self.hit(Production::Whitespace);
                pos += len;
                continue;
            }
            let (production, kind, len) = if let Some(len) = self.comments.len_at(self.src, pos) {
                (Production::Comment, EditKind::DropComment, len)
            } else if let Some(len) = lexeme::literal_escape_len(rest) {
                (Production::LiteralEscape, EditKind::DropLiteralEscape, len)
            } else {
                return pos;
            };
            if value_starts && self.choices.choose(2) == KEEP_AS_TEXT {
                if production == Production::LiteralEscape {
                    self.escape_kept_at = Some(pos);
                }
                return pos;
            }
            self.hit(production);
            self.edit(kind, pos..pos + len);
            pos += len;
        }
    }

    /// Whether a bare run ends before the key at `q`: always at a quoted key the object
    /// declares after a comma (`, "name":` is a member's shape); at any other — an undeclared
    /// quoted name (`echo done, "status": ok >> log` under an open schema), a quoted name after
    /// a space or a line break (`grep -c "timeout": x`), an unquoted word — both readings are
    /// walked (`declined` remembers a key this run already kept as text).
    fn ends_at_key(&mut self, q: usize, after_comma: bool, line_start: bool, declined: &mut Option<usize>) -> bool {
        let spot = match (after_comma, line_start) {
            (true, _) => Spot::Comma,
            (_, true) => Spot::LineStart,
            _ => Spot::MidLine,
        };
        let Some(key) = self.key_in_text_at(q, spot) else {
            return false;
        };
        if !key.readable {
            // No member reading can take it: the text reading stands, in doubt.
            self.kept_as_text.get_or_insert(q);
            return false;
        }
        if self.shell_quoting.inside(self.src, self.run_start, q) {
            // A heredoc's body, its terminator still to come, or a shell string over lines: the
            // line is the document's, whatever shape it has. Should the text reading fit, the
            // key-shaped line still puts it in doubt.
            self.kept_as_text.get_or_insert(q);
            *declined = Some(q);
            return false;
        }
        if after_comma && key.quoted && key.colon && key.strong {
            return true;
        }
        // `{⏎  "command": npm test,⏎  timeout: 60000⏎}`: in an object laid out a member a line,
        // a declared name and its colon that start the line after a comma start a member.
        let pretty = self.frames.last().is_some_and(|f| f.kind == FrameKind::Object && f.pretty);
        let line_start = || self.src[..q][self.src[..q].trim_end().len()..].contains('\n');
        if after_comma && pretty && key.colon && line_start() && self.declared_word_key_at(q) {
            return true;
        }
        if *declined == Some(q) {
            return false;
        }
        if self.choices.choose(2) == TAKE_AS_STRUCTURE {
            self.text_as_member.push(q);
            return true;
        }
        *declined = Some(q);
        if spot != Spot::MidLine && key.colon {
            // `, confirm: -`: the member reading may not parse, so it cannot raise the doubt.
            self.kept_as_text.get_or_insert(q);
        }
        false
    }

    /// Where the bracket at `at` closes, if it opens text inside a bare run: it pairs up, and
    /// what it holds is not a member's shape (`{"mode": "x", "flag": true}`), or — if it is —
    /// the reading that takes it as text is chosen (the other walks through it as structure).
    fn bracketed_text(&mut self, at: usize) -> Option<usize> {
        if !matches!(self.src.as_bytes()[at], b'{' | b'[' | b'(') {
            return None;
        }
        let close = self.brackets.closer_of(at)?;
        let inside = &self.src[at..close];
        let member_shaped = inside.contains("\":") || inside.contains("':");
        // The root's `{` pairs with nothing and this bracket with the input's last closer
        // (`"new_string": if (y) {}` with the object's `}` lost, or not): the closer may be
        // the object's own.
        let root_unpaired = self.root_unpaired();
        let takes_last_closer = root_unpaired && self.src.as_bytes()[at] == b'{' && self.src.rfind('}') == Some(close);
        // `{"edit": {"old": …, "new": f(a) {}, "path": …}`: after this pair too few `}` are
        // left for the objects open, so its closer may be an enclosing object's own.
        let closer_may_be_enclosing = self.src.as_bytes()[at] == b'{' && self.too_few_closers_from(close + 1);
        let doubtful = member_shaped || takes_last_closer || closer_may_be_enclosing;
        (!doubtful || self.choices.choose(2) == KEEP_AS_TEXT).then_some(close)
    }

    /// Whether the `}` left from `pos` on are fewer than the objects open: one was lost. The
    /// count is kept from the last call, as the parse moves forward.
    fn too_few_closers_from(&mut self, pos: usize) -> bool {
        let bytes = self.src.as_bytes();
        let count = match self.closers_after {
            Some((at, count)) if at <= pos => count - memchr::memchr_iter(b'}', &bytes[at..pos]).count(),
            _ => memchr::memchr_iter(b'}', &bytes[pos..]).count(),
        };
        self.closers_after = Some((pos, count));
        count < self.frames.iter().filter(|f| f.kind == FrameKind::Object).count()
    }

    /// Whether the innermost object's keys are known from a schema, open to more or not: an
    /// open object takes any member a key shape spells, so the shape is a second reading there
    /// as much as in a closed one.
    fn object_has_schema(&self) -> bool {
        self.frames.iter().rev().find(|f| f.kind == FrameKind::Object).is_some_and(|f| f.keys.is_some())
    }

    /// Whether `text` ends, after a comma, in a name the object declares (quoted or not, a
    /// colon or not): a member cut down to its key.
    fn ends_with_bare_key(&self, text: &str) -> bool {
        let Some((_, last)) = text.rsplit_once(',') else {
            return false;
        };
        let name = last.trim().trim_end_matches(':').trim_end().trim_matches(['"', '\'']);
        self.object_keys().is_some_and(|keys| keys.contains(&name))
    }

    /// Whether `text` ends, after a comma, in the start of a name the object declares
    /// (`, run_in_bac`): with the input ending there, a member cut inside its key.
    fn ends_with_key_prefix(&self, text: &str) -> bool {
        let Some((_, last)) = text.rsplit_once(',') else {
            return false;
        };
        let name = last.trim().trim_start_matches(['"', '\'']);
        !name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '@'))
            && self.object_keys().is_some_and(|keys| keys.iter().any(|key| key.starts_with(name)))
    }

    /// A bare run from `start` to `end` without its trailing blanks, or — where they hold a line
    /// break before a comma or a closer of a one-line object (`foo(bar)⏎}`), or end a value over
    /// lines with a line break in a one-line object, or two in any, before a comma, a closer or
    /// a quoted key whose comma was lost (`A=1⏎DEBUG=false⏎ "file_path"`) — with them up to the
    /// last line break: it may be the value's own (a file's last); both readings are walked.
    fn trailing_layout_or_text(&mut self, start: usize, end: usize, textual: bool) -> &'s str {
        let src = self.src;
        let trimmed = src[start..end].trim_end();
        let one_line = self.frames.last().is_some_and(|f| f.kind == FrameKind::Object && !f.pretty);
        let next = self.skip_blank(end);
        let gap = &src[start + trimmed.len()..next];
        let line_breaks = gap.matches(is_line_break).count();
        let before_structure = matches!(self.byte(next), Some(b',' | b'}' | b']'));
        let before_key = next > end && matches!(self.byte(next), Some(b'"' | b'\''));
        // A value over lines (a file) may end in line breaks of its own; after a one-line value
        // a line break before the next key is the members' layout.
        let over_lines = trimmed.contains(is_line_break);
        let doubtful = match (before_structure, before_key) {
            (true, _) => (one_line && line_breaks > 0) || (over_lines && line_breaks > 1),
            (_, true) => over_lines && ((one_line && line_breaks > 0) || line_breaks > 1),
            _ => false,
        };
        if textual && doubtful && self.choices.choose(2) == KEEP_AS_TEXT {
            let kept = gap.rfind(is_line_break).map_or(0, |at| at + gap[at..].chars().next().map_or(1, char::len_utf8));
            return &src[start..start + trimmed.len() + kept];
        }
        trimmed
    }

    /// Whether the run at `start` is text that a written-out escape kept at the value's start
    /// begins (`\t\treturn err`), not layout before a quoted or bracketed value (`\n"ls"`).
    fn escape_starts_text(&self, start: usize, text: &str, shape: ShapeId) -> bool {
        let mut rest = text;
        while let Some(len) = lexeme::literal_escape_len(rest).or_else(|| lexeme::whitespace_len(rest)) {
            rest = &rest[len..];
        }
        self.escape_kept_at == Some(start)
            && self.shapes.is_textual(shape)
            && rest.starts_with(|c: char| !matches!(c, '"' | '\'' | '{' | '[' | '('))
    }

    /// Whether a closer, or the input's end, follows the `}` at `close` (blanks, commas and
    /// comments between): `}}`, `}]`, `},}`, `} /* end */ }`.
    fn closers_follow(&self, close: usize) -> bool {
        let mut at = close + 1;
        loop {
            at = self.skip_ws_quiet(at);
            match self.byte(at) {
                Some(b',') => at += 1,
                Some(b'}' | b']') | None => return true,
                _ => return false,
            }
        }
    }

    /// Whether the document is written in Python's syntax: a single-quoted string, or `True`,
    /// `False` or `None` as a value (after `:`, `[` or `,`, line breaks between; before a
    /// separator, a closer or the end).
    fn reads_as_python(&self) -> bool {
        self.productions.contains(Production::SingleString)
            || ["True", "False", "None"].iter().any(|word| {
                self.src.match_indices(word).any(|(at, _)| {
                    let before = self.src[..at].trim_end();
                    let after = self.src[at + word.len()..].trim_start();
                    before.ends_with([':', '[', ',']) && (after.is_empty() || after.starts_with([',', '}', ']']))
                })
            })
    }

    /// Whether the root's closer may be missing: its `{` pairs with nothing, or was never there.
    pub(super) fn root_unpaired(&self) -> bool {
        self.implicit_root || self.root_open.is_some_and(|open| self.brackets.closer_of(open).is_none())
    }

    /// Whether the first inner quote the string read since edit `mark` closes a quoted word:
    /// text right before it, a blank or a shell operator (`"cat"|"wc"`) right after.
    fn first_inner_quote_closes(&self, mark: usize) -> bool {
        let bytes = self.src.as_bytes();
        self.edits[mark..].iter().find(|e| e.kind == EditKind::EscapeInnerQuote).is_some_and(|e| {
            let at = e.span[0];
            let ends_word = |b: &u8| {
                b.is_ascii_whitespace()
                    || b.is_ascii_digit()
                    || matches!(b, b'|' | b'&' | b';' | b'<' | b'>' | b'(' | b')')
            };
            at > 0 && !bytes[at - 1].is_ascii_whitespace() && bytes.get(at + 1).is_some_and(ends_word)
        })
    }

    /// A closer inside bare text at `at`: the innermost container's own closer, followed by
    /// what continues its parent, ends the run; any other (`ls}; rm -rf ~`, `echo a]`) may be
    /// text or structure — both readings are walked.
    fn closer_ends_run(&mut self, at: usize) -> bool {
        let own = match self.frames.iter().rev().find(|f| f.kind != FrameKind::List).map(|f| f.kind) {
            Some(FrameKind::Array) => b']',
            _ => b'}',
        };
        if self.src.as_bytes()[at] == own && self.closer_ok(at) && !self.more_closers_than_open(at) {
            return true;
        }
        self.choices.choose(2) == TAKE_AS_STRUCTURE
    }

    /// Whether the closers from `at` on, with only blanks between them (`return nil⏎\t}⏎}`),
    /// outnumber the containers open: one of them is the text's own (a code block's brace) or
    /// a stray one — two readings.
    fn more_closers_than_open(&self, at: usize) -> bool {
        let open = self.frames.iter().filter(|f| f.kind != FrameKind::List).count();
        let closers = self.src[at..]
            .bytes()
            .filter(|b| !b.is_ascii_whitespace())
            .take_while(|b| matches!(b, b'}' | b']'))
            .count();
        closers > open
    }

    /// Whether a blank (any white space, a line break too) starts at `at`.
    fn blank_at(&self, at: usize) -> bool {
        let byte = self.src.as_bytes()[at];
        // Only these bytes start a white space character: the rest need no decoding.
        matches!(byte, b'\t'..=b'\r' | b' ' | 0xC2 | 0xE1 | 0xE2 | 0xE3)
            && self.src[at..].chars().next().is_some_and(is_blank)
    }

    /// A comment marker after a blank inside bare text (`ls -la // list`, `//server/share`):
    /// a comment that ends the value, or text — both readings are walked.
    fn comment_may_end_run(&mut self, at: usize) -> bool {
        self.comments.len_at(self.src, at).is_some() && self.choices.choose(2) == TAKE_AS_STRUCTURE
    }

    /// An escape written out inside bare text (`npm test\n"timeout": 5`): where what follows it
    /// is structure (a key, a comma, a closer, the end), it may be layout that ends the value
    /// or text — both readings are walked.
    fn escape_may_end_run(&mut self, _at: usize, q: usize) -> bool {
        let bytes = self.src.as_bytes();
        let structure = q >= bytes.len() || matches!(bytes[q], b',' | b'}' | b']') || self.key_at(q, true).is_some();
        structure && self.choices.choose(2) == TAKE_AS_STRUCTURE
    }

    /// `document = prefix? (object | members) suffix*`
    fn document(&mut self) -> Result<Document, SyntaxError> {
        // The CLI drops one leading byte-order mark itself; so do we, without an edit.
        self.hit(Production::Document);
        let start = if self.src.starts_with('\u{feff}') { 3 } else { 0 };
        let pos = self.skip_ws_outside(start);
        let root_shape = self.shapes.root();
        let (root, mut pos) = match self.byte(pos) {
            Some(b'{') => self.object(pos, root_shape, false)?,
            _ if self.key_colon_at(pos, true).is_some() && self.shapes.known_keys(root_shape).is_some() => {
                self.hit(Production::Members);
                self.edit(EditKind::InsertOpenBrace, pos..pos);
                self.object(pos, root_shape, true)?
            }
            _ => {
                let Some(open) = self.src[pos..].find('{').map(|i| pos + i) else {
                    return Err(SyntaxError::new(RefusalCode::NoObject, "no JSON object in the input", pos));
                };
                let prefix = &self.src[pos..open];
                match wrapper::prefix(prefix, self.tool).filter(|_| self.names_no_key(prefix)) {
                    Some(opened) => (self.opened, self.wrapped, self.wrapper_prefix) = (opened, true, pos..open),
                    None => return Err(text_outside("before", pos)),
                }
                if self.opened.fence {
                    self.hit(Production::Fence);
                }
                self.hit(Production::Prefix);
                self.edit(EditKind::DropPrefix, pos..open);
                self.object(open, root_shape, false)?
            }
        };
        let mut rivals = Vec::new();
        loop {
            pos = self.skip_ws_outside(pos);
            if pos < self.src.len() {
                self.hit(Production::Suffix);
            }
            match self.byte(pos) {
                None => break,
                Some(closer @ (b'}' | b']')) => {
                    if closed_early_before_more(&root, self.src, closer) {
                        // `{"a": {"b": 1}}, "c": 2}}`: this `}` is the stray, or the one that
                        // closed an object before the members after it.
                        return Err(SyntaxError::new(
                            RefusalCode::Ambiguous,
                            "a stray closer after the object: this one, or one inside it that closed a container early?",
                            pos,
                        ));
                    }
                    self.edit(EditKind::DropStrayCloser, pos..pos + 1);
                    pos += 1;
                }
                Some(b'{') => {
                    // A second object: the caller keeps it only if it reads the same.
                    let mark = self.edits.len();
                    let (rival, end) = self.object(pos, root_shape, false)?;
                    self.edits.truncate(mark);
                    self.edit(EditKind::DropDuplicate, pos..end);
                    rivals.push(rival);
                    pos = end;
                }
                Some(_) => {
                    let rest = &self.src[pos..];
                    if !wrapper::suffix(rest, self.opened, self.tool) || !self.names_no_key(rest) {
                        return Err(text_outside("after", pos));
                    }
                    if self.opened.fence {
                        self.hit(Production::Fence);
                    }
                    self.edit(EditKind::DropSuffix, pos..self.src.len());
                    pos = self.src.len();
                }
            }
        }
        if let Some(at) = self.python_escape_at.filter(|_| self.reads_as_python()) {
            // `{'file_path': "D:\archive\a.txt"}`: in Python's syntax `\a` is a bell.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "an escape Python reads (`\\a`, `\\v`, octal, `\\N{…}`, `\\x`) in a double-quoted string of a document in Python's syntax: the escape, or the text's backslash?",
                at,
            ));
        }
        Ok(Document {
            root,
            rivals,
            edits: std::mem::take(&mut self.edits),
            productions: self.productions,
            text_as_member: std::mem::take(&mut self.text_members),
            key_kept_as_text: self.kept_as_text,
            kept_in_nested: std::mem::take(&mut self.kept_in_nested),
        })
    }

    fn enter(&mut self, kind: FrameKind, keys: Option<Vec<&'s str>>, at: usize) -> Result<(), SyntaxError> {
        if self.frames.len() >= self.options.max_depth {
            return Err(SyntaxError::new(
                RefusalCode::TooDeep,
                format!("nesting deeper than {} levels", self.options.max_depth),
                at,
            ));
        }
        self.frames.push(Frame {
            kind,
            keys,
            paren: false,
            open: false,
            pretty: false,
            shape: None,
            lost_closer: false,
        });
        Ok(())
    }

    /// Closes a container at a closer that belongs to an enclosing one: inserted closer.
    fn enclosing_expects(&self, closer: u8) -> bool {
        let wanted = if closer == b'}' { FrameKind::Object } else { FrameKind::Array };
        self.frames.iter().rev().skip(1).any(|f| f.kind == wanted)
    }

    /// `closer`: where the innermost container ends, if at `pos`: its own closer; the end of
    /// input or a closer an enclosing container expects (inserted); the other closer (replaced).
    fn container_end(&mut self, pos: usize, own: u8) -> Option<usize> {
        let other = if own == b'}' { b']' } else { b'}' };
        match self.byte(pos) {
            None => {
                self.edit(EditKind::InsertCloser, pos..pos);
                Some(pos)
            }
            // A wrapper's close (a fence, `</tool_input>`) ends what is open as the input's end does.
            Some(_) if self.wrapper_closes_at(pos) => {
                self.edit(EditKind::InsertCloser, pos..pos);
                Some(pos)
            }
            Some(byte) if byte == own => Some(pos + 1),
            Some(byte) if byte == other && self.enclosing_expects(other) => {
                self.edit(EditKind::InsertCloser, pos..pos);
                Some(pos)
            }
            Some(byte) if byte == other => {
                self.edit(EditKind::ReplaceCloser, pos..pos + 1);
                Some(pos + 1)
            }
            _ => None,
        }
    }

    /// Whether the rest of the input from `pos` is the close of the wrapper the dropped prefix
    /// opened — a fence or a closing tag first — and nothing else. A closing sentence alone
    /// does not count: with a closer lost, `"sudo shutdown -h" now.` may hold an argument.
    pub(super) fn wrapper_closes_at(&self, pos: usize) -> bool {
        if !self.wrapped {
            return false;
        }
        let rest = &self.src[pos..];
        // Only the input's last bytes can be a wrapper's close: the bound comes before any
        // reading of the rest, or every fence in a long value would read to its line's end.
        if rest.len() > wrapper::MAX_SUFFIX_LEN {
            return false;
        }
        let head = rest.trim_start();
        // A closing tag ends the value only if it closes a tag the wrapper opened (`</Callout>`
        // in MDX content is the content's).
        let closes_wrapper =
            head.starts_with("</") && wrapper::closes_opened(&self.src[self.wrapper_prefix.clone()], head);
        // A special token ends the value after a wrapper of special tokens (`<|tool_call_begin|>`
        // … `<|tool_call_end|>`, harmony's `<|call|>`, DeepSeek's `<｜tool▁call▁end｜>`).
        let special = |text: &str| text.contains("<|") || text.contains("<｜");
        let ends_tokens =
            (head.starts_with("<|") || head.starts_with("<｜")) && special(&self.src[self.wrapper_prefix.clone()]);
        let marker = closes_wrapper || ends_tokens || (self.opened.fence && lexeme::fence_len(head).is_some());
        marker && wrapper::suffix(rest, self.opened, self.tool) && self.names_no_key(rest)
    }

    /// `separator`: the first comma after a value separates; any other is dropped.
    fn comma(&mut self, pos: usize, separated: &mut bool, trailing: &mut Option<usize>) {
        self.hit(Production::Separator);
        if *separated {
            self.edit(EditKind::DropComma, pos..pos + 1);
        } else {
            *trailing = Some(pos);
        }
        *separated = true;
    }

    /// Leaves a container: a comma left unused before its end is dropped.
    fn close(&mut self, trailing_comma: Option<usize>) {
        if let Some(comma) = trailing_comma {
            self.edit(EditKind::DropComma, comma..comma + 1);
        }
        self.hit(Production::Closer);
        self.frames.pop();
    }

    /// `object = "{" ws (member (sep member)*)? sep? close`; with `implicit`, the `{` is missing.
    fn object(&mut self, open: usize, shape: ShapeId, implicit: bool) -> Parsed {
        self.enter(FrameKind::Object, self.shapes.known_keys(shape), open)?;
        let pretty = implicit || self.src[open + 1..self.skip_ws_quiet(open + 1)].contains(is_line_break);
        if let Some(frame) = self.frames.last_mut() {
            frame.open = self.shapes.allows_undeclared(shape);
            frame.pretty = pretty;
            frame.shape = Some(shape);
        }
        self.hit(Production::Object);
        if self.frames.len() == 1 {
            if implicit {
                self.implicit_root = true;
            } else {
                self.root_open = Some(open);
            }
        }
        // A nested object whose `}` is lost, or whose `}` is the input's last or is followed by
        // nothing but closers (commas, comments between) while an enclosing object's `}` may be
        // lost (a wrapper's close may follow it): any of those
        // closers may be the lost one (`{"spec": {"template": {"image": "x", "pull": "y"}}`
        // may have lost `template`'s; `[{"name": "web", "config": {"mode": "a"}]` `config`'s).
        let root_unpaired = self.root_unpaired();
        let enclosing_lost = root_unpaired || self.frames.iter().rev().skip(1).any(|f| f.lost_closer);
        let unpaired = !implicit
            && match self.brackets.closer_of(open) {
                None => true,
                Some(close) => enclosing_lost && (self.closers_follow(close) || self.src.rfind('}') == Some(close)),
            };
        if let Some(frame) = self.frames.last_mut() {
            frame.lost_closer = unpaired || (implicit && root_unpaired);
        }
        let mut pos = if implicit { open } else { open + 1 };
        let mut members: Vec<Member> = Vec::new();
        let mut separated = true;
        let mut trailing_comma = None;
        let end = loop {
            pos = self.skip_ws(pos);
            if let Some(end) = self.container_end(pos, b'}') {
                break end;
            }
            if self.byte(pos) == Some(b',') {
                self.comma(pos, &mut separated, &mut trailing_comma);
                pos += 1;
                continue;
            }
            if self.src[pos..].starts_with(WIDE_COMMA) {
                // `"a"，"b"`: a CJK input method's comma between members.
                self.edit(EditKind::WidePunctuation, pos..pos + WIDE_COMMA.len_utf8());
                self.comma(pos, &mut separated, &mut trailing_comma);
                pos += WIDE_COMMA.len_utf8();
                continue;
            }
            if let (Some(comma), Some(b'{')) = (trailing_comma, self.byte(pos)) {
                // Only with one array open: in `[{"kids": [{"a": 2, {"a": 3}]}` the next item may
                // be the inner array's or the outer one's (attack round 24).
                let one_array = self.frames.iter().filter(|f| f.kind == FrameKind::Array).count() == 1;
                // And only where the next object starts with a key this item has: else the `{` may
                // be a stray one inside this item (`[{"path": "a", {"recursive": true}]`, one item).
                let repeats_a_key = {
                    let inner = self.skip_ws_quiet(pos + 1);
                    let name = self.src[inner..].strip_prefix('"').and_then(|r| r.split_once('"')).map(|(n, _)| n);
                    name.is_some_and(|name| members.iter().any(|member| member.key == name))
                };
                if unpaired
                    && !members.is_empty()
                    && one_array
                    && repeats_a_key
                    && self.parent_kind() == Some(FrameKind::Array)
                {
                    // `[{"path": "a", {"path": "b"}]`: an item's `}` lost before the next item
                    // (a key is wanted here, and a `{` is no key's start): the comma is the array's.
                    self.edit(EditKind::InsertCloser, comma..comma);
                    self.close(None);
                    return Ok((Node { span: open..comma, kind: NodeKind::Object(members) }, comma));
                }
            }
            // The closer this `{` pairs with was passed inside a member (`"template": "a}"`): it
            // was text, so this object's own closer may be lost too.
            let closer_passed = !implicit
                && self.brackets.closer_of(open).is_some_and(|close| close < pos)
                && self.too_few_closers_from(pos);
            let ancestor_key =
                if (unpaired || closer_passed) && !members.is_empty() { self.ancestor_takes_key_at(pos) } else { None };
            if let Some(name) = ancestor_key {
                if self.choices.choose(2) == TAKE_AS_STRUCTURE {
                    // `"options": {"verbose": true, "force": false` with a `}` lost: a member the
                    // enclosing object takes too may be the enclosing object's.
                    self.edit(EditKind::InsertCloser, pos..pos);
                    break pos;
                }
                // Kept here, as the text's closers pair: should it break the schema here (a value
                // this object refuses, `"mode": "debug"`, or a key it does not take), the model
                // may have meant it here, and the reading that moves it out is not the only one.
                let declared = self.object_keys().is_some_and(|keys| keys.contains(&name));
                let declared = declared.then(|| self.shapes.property(shape, name));
                self.kept_in_nested.push(KeptMember { parent: self.pointer(), name: name.to_string(), declared });
            }
            if !separated {
                self.edit(EditKind::InsertComma, pos..pos);
            }
            trailing_comma = None;
            let (member, after) = self.member(pos, shape)?;
            members.push(member);
            pos = self.skip_ws(after);
            separated = false;
            if self.restarts_at(pos) {
                // `{"a": 1, "b": 2{"a": 1, ...`: the copy ends here; the document compares them.
                self.hit(Production::Restart);
                self.edit(EditKind::CloseRestarted, pos..pos);
                break pos;
            }
            if let Some(stray) = self.stray_closer_at(pos) {
                self.edit(EditKind::DropStrayCloser, pos..stray);
                pos = self.skip_ws(stray);
            }
            match self.byte(pos) {
                None | Some(b',' | b'}' | b']') => {}
                Some(_) if self.src[pos..].starts_with(WIDE_COMMA) => {}
                // A key that lost its colon counts at a line start (`sleep 10⏎"timeout" 600000`).
                // The run before ended at a key this reading takes from text (`sleep 10 "timeout" 600000`).
                Some(_) if self.text_as_member.last() == Some(&pos) => {}
                Some(_) if self.wrapper_closes_at(pos) => {}
                Some(_) if self.key_in_text_at(pos, self.spot_after_member(after, pos)).is_some() => {}
                Some(_) => {
                    self.frames.pop();
                    return self.error("expected ',' or '}' after a member", pos);
                }
            }
        };
        self.close(trailing_comma);
        Ok((Node { span: open..end, kind: NodeKind::Object(members) }, end))
    }

    /// Where `pos` is, after a member's value that ended at `after`.
    fn spot_after_member(&self, after: usize, pos: usize) -> Spot {
        if self.src[after..pos].contains('\n') {
            Spot::LineStart
        } else {
            Spot::AfterMember
        }
    }

    /// `member = key ws ":"? ws value`
    fn member(&mut self, pos: usize, object_shape: ShapeId) -> Result<(Member, usize), SyntaxError> {
        self.hit(Production::Member);
        let colon_inside = self.colon_inside_key(pos).map(|(name, end)| (name.to_string(), end));
        let inside = colon_inside.is_some();
        let (key, key_end) = match colon_inside {
            Some((name, end)) => {
                // `"timeout:" 30`: the colon typed inside the quotes.
                self.hit(Production::DamagedKey);
                self.edit(EditKind::RepairKeyQuote, pos..end);
                (name, end)
            }
            None => self.key(pos)?,
        };
        if self.text_as_member.contains(&pos) {
            self.text_members.push(key.clone());
        }
        let key_span = pos..key_end;
        let mut after = if inside { key_end } else { self.skip_ws(key_end) };
        if inside {
            // The colon was read with the key.
        } else if self.byte(after) == Some(b':') {
            after += 1;
        } else if self.src[after..].starts_with(WIDE_COLON) {
            // `"command"："ls"`: a CJK input method's colon after the key.
            self.edit(EditKind::WidePunctuation, after..after + WIDE_COLON.len_utf8());
            after += WIDE_COLON.len_utf8();
        } else if after == key_end && self.equals_for_colon_at(&key, after) {
            // `timeout=30`: a keyword argument's `=` where the colon goes.
            self.edit(EditKind::EqualsForColon, after..after + 1);
            after += 1;
        } else if (after > key_end && self.value_may_follow_lost_colon(&key, after))
            || (after == key_end && self.scalar_glued_to_key(&key, key_end))
        {
            // `"title" "x"`, `"timeout" 600000`: a key, a space, a value: the colon is missing.
            self.edit(EditKind::InsertColon, key_end..key_end);
        } else {
            return self.error(format!("expected ':' after key '{key}'"), after);
        }
        self.refuse_other_separator(self.skip_ws_quiet(after))?;
        let value_pos = self.skip_ws_before_value(after);
        let value_shape = self.shapes.property(object_shape, &key);
        let value_pos = self.value_start_after_layout(after, value_pos, value_shape);
        self.path.push(escape_pointer(&key));
        let value = self.member_value(value_pos, value_shape);
        self.path.pop();
        let (value, end) = value?;
        Ok((Member { key, key_span, value }, end))
    }

    /// Where a bare text value starts, after the blanks from `colon_end` to `value_pos`: one
    /// blank (or one line break) is formatting; more (`":     return 2`, `":⏎    if x:`) may be
    /// the value's own indentation — both readings are walked.
    fn value_start_after_layout(&mut self, colon_end: usize, value_pos: usize, shape: ShapeId) -> usize {
        let gap = &self.src[colon_end..value_pos];
        let first = if gap.starts_with("\r\n") { 2 } else { gap.chars().next().map_or(0, char::len_utf8) };
        if gap.len() <= first || !gap.chars().all(is_blank) || !self.shapes.is_textual(shape) {
            return value_pos;
        }
        if !self.bare_text_at(value_pos) || self.choices.choose(2) == TAKE_AS_STRUCTURE {
            return value_pos;
        }
        colon_end + first
    }

    /// Whether a bare run, not a quoted, bracketed or scalar value, starts at `pos`.
    fn bare_text_at(&self, pos: usize) -> bool {
        let rest = &self.src[pos..];
        let scalar = lexeme::number_len(rest)
            .or_else(|| lexeme::literal_len(rest))
            .is_some_and(|len| self.value_ends_at(pos + len));
        !rest.is_empty() && !rest.starts_with(['"', '\'', '{', '[', '(', ',', '}', ']']) && !scalar
    }

    /// Whether a value starts at `at`, right after a key whose colon is missing: a quote, a
    /// bracket, a number or a literal; for a key the object declares, any text (`, description
    /// "clean"`, `"timeout" 600000`, `"description" clean build dir`).
    fn value_may_follow_lost_colon(&self, key: &str, at: usize) -> bool {
        let rest = &self.src[at..];
        let Some(&first) = rest.as_bytes().first() else {
            return false;
        };
        let declared = self.object_keys().is_some_and(|keys| keys.contains(&key));
        matches!(first, b'"' | b'\'' | b'{' | b'[' | b'-' | b'0'..=b'9')
            || lexeme::literal_len(rest).is_some()
            || (declared && !matches!(first, b',' | b'}' | b']' | b':'))
    }

    /// Whether a number or a literal stands right after the closing quote of a key the object
    /// declares, up to the value's end (`"timeout"30}`): no blank, yet the colon is all that is
    /// missing (an undeclared name may be text, `"a"1` an item).
    fn scalar_glued_to_key(&self, key: &str, key_end: usize) -> bool {
        let rest = &self.src[key_end..];
        let quoted = matches!(self.src.as_bytes()[..key_end].last(), Some(b'"' | b'\''));
        let declared = self.object_keys().is_some_and(|keys| keys.contains(&key));
        let len = lexeme::number_len(rest).or_else(|| lexeme::literal_len(rest));
        quoted && declared && len.is_some_and(|len| self.value_ends_at(key_end + len))
    }

    /// Whether a `=` right after a key the object declares stands for its colon: a value glued
    /// to it (`timeout=30`, `command=ls`). Before a blank, a quote or a bracket (`= "x"`) it
    /// may start the value's text (see [`Self::refuse_other_separator`]); `==` and `=>` are
    /// other operators.
    fn equals_for_colon_at(&self, key: &str, at: usize) -> bool {
        let Some(value) = self.src[at..].strip_prefix('=') else {
            return false;
        };
        let glued = value.chars().next().is_some_and(|c| !c.is_whitespace() && !"=>\"'{[(,}]".contains(c));
        glued && self.object_keys().is_some_and(|keys| keys.contains(&key))
    }

    /// `key = string | "'" ... "'" | identifier`
    fn key(&mut self, pos: usize) -> Result<(String, usize), SyntaxError> {
        self.hit(Production::Key);
        if let Some((name, end)) = self.damaged_key(pos).map(|(name, end)| (name.to_string(), end)) {
            self.hit(Production::DamagedKey);
            self.edit(EditKind::RepairKeyQuote, pos..end);
            return Ok((name, end));
        }
        match self.byte(pos) {
            Some(quote @ (b'"' | b'\'')) => {
                let (text, end) = self.string(pos, quote, None)?;
                Ok((text, end))
            }
            _ => match self.unquoted_key_len(pos) {
                Some(len) => {
                    self.edit(EditKind::QuoteKey, pos..pos + len);
                    Ok((self.src[pos..pos + len].to_string(), pos + len))
                }
                None => self.error("expected a key", pos),
            },
        }
    }

    /// A member's value; where the schema expects an array, commas after the first value
    /// continue an unbracketed list rather than the object.
    fn member_value(&mut self, pos: usize, shape: ShapeId) -> Parsed {
        let (first, end) = self.value(pos, shape)?;
        let scalar = !matches!(first.kind, NodeKind::Object(_) | NodeKind::Array(_) | NodeKind::Bare(_));
        if !scalar || !self.shapes.expects_list(shape) || !self.continues_list(end) {
            return Ok((first, end));
        }
        self.enter(FrameKind::List, None, pos)?;
        self.hit(Production::List);
        let items = self.items(vec![first], end, self.shapes.items(shape));
        self.frames.pop();
        let (items, end) = items?;
        self.edit(EditKind::UnbracketedList, pos..end);
        Ok((Node { span: pos..end, kind: NodeKind::List(items) }, end))
    }

    /// After a value at `pos`: a comma followed by another value, not by a key or a closer.
    fn continues_list(&self, pos: usize) -> bool {
        let p = self.skip_ws_quiet(pos);
        if self.byte(p) != Some(b',') {
            return false;
        }
        let q = self.skip_ws_quiet(p + 1);
        // A key-shaped item (`dry_run: true`, declared or not) ends the list: it may be a member.
        self.byte(q).is_some_and(|b| !is_closer(b) && b != b',') && self.key_in_text_at(q, Spot::Comma).is_none()
    }

    /// Items of an unbracketed list after the first, up to a key, a closer or the end.
    fn items(
        &mut self,
        mut items: Vec<Node>,
        mut pos: usize,
        item_shape: ShapeId,
    ) -> Result<(Vec<Node>, usize), SyntaxError> {
        while self.continues_list(pos) {
            let comma = self.skip_ws_quiet(pos);
            let start = self.skip_ws_before_value(comma + 1);
            self.path.push(items.len().to_string());
            let item = self.value(start, item_shape);
            self.path.pop();
            let (item, end) = item?;
            items.push(item);
            pos = end;
        }
        Ok((items, pos))
    }

    /// `array = "[" ws (value (sep value)*)? sep? close`
    fn array(&mut self, open: usize, shape: ShapeId, closer: u8) -> Parsed {
        self.enter(FrameKind::Array, None, open)?;
        if let Some(frame) = self.frames.last_mut() {
            frame.paren = closer == b')';
        }
        self.hit(Production::Array);
        let item_shape = self.shapes.items(shape);
        let in_object = self.frames.iter().rev().skip(1).any(|f| f.kind == FrameKind::Object);
        let mut pos = open + 1;
        let mut items = Vec::new();
        let mut separated = true;
        let mut trailing_comma = None;
        let end = loop {
            pos = if separated { self.skip_ws_before_value(pos) } else { self.skip_ws(pos) };
            if closer == b')' && self.byte(pos) == Some(b')') {
                self.edit(EditKind::ParenForBracket, pos..pos + 1);
                break pos + 1;
            }
            if let Some(end) = self.container_end(pos, b']') {
                break end;
            }
            let Some(byte) = self.byte(pos) else { break pos };
            match byte {
                b',' => {
                    let next = self.skip_ws_quiet(pos + 1);
                    if in_object && self.intact_key_at(next) {
                        // `["a", "pinned": false`: the array was never closed.
                        self.hit(Production::Separator);
                        self.edit(EditKind::InsertCloser, pos..pos);
                        break pos;
                    }
                    self.refuse_array_hole(pos, separated)?;
                    self.comma(pos, &mut separated, &mut trailing_comma);
                    pos += 1;
                    continue;
                }
                _ if in_object && self.intact_key_at(pos) => {
                    self.edit(EditKind::InsertCloser, pos..pos);
                    break pos;
                }
                // `["a.md"，"b.md"]`: a CJK input method's comma between items.
                _ if self.src[pos..].starts_with(WIDE_COMMA) => {
                    self.refuse_array_hole(pos, separated)?;
                    self.edit(EditKind::WidePunctuation, pos..pos + WIDE_COMMA.len_utf8());
                    self.comma(pos, &mut separated, &mut trailing_comma);
                    pos += WIDE_COMMA.len_utf8();
                    continue;
                }
                _ => {}
            }
            if !separated {
                if !matches!(byte, b'"' | b'\'' | b'{' | b'[' | b'-' | b'0'..=b'9') {
                    self.frames.pop();
                    return self.error("expected ',' or ']' after an item", pos);
                }
                self.edit(EditKind::InsertComma, pos..pos);
            }
            trailing_comma = None;
            let members_spelling = || self.unreadable_key_at(pos).is_some() || self.lost_colon_at(pos).is_some();
            if in_object && separated && !items.is_empty() && members_spelling() {
                // `[build, dist, force=true]`, `[build, dist, force true]`: a member's shape no
                // member reading can take; the item that keeps it is in doubt.
                self.kept_as_text.get_or_insert(pos);
            }
            self.path.push(items.len().to_string());
            let item = self.value(pos, item_shape);
            self.path.pop();
            let (item, after) = item?;
            items.push(item);
            pos = after;
            separated = false;
        };
        self.close(trailing_comma);
        Ok((Node { span: open..end, kind: NodeKind::Array(items) }, end))
    }

    /// `value = object | array | string | number | literal | bare_run`
    pub(super) fn value(&mut self, pos: usize, shape: ShapeId) -> Parsed {
        self.hit(Production::Value);
        let Some(byte) = self.byte(pos) else {
            return self.error("expected a value, found the end", pos);
        };
        match byte {
            b'{' => return self.object(pos, shape, false),
            b'[' => return self.array(pos, shape, b']'),
            b'(' if self.shapes.expects_list(shape) => {
                self.refuse_paren_without_comma(pos)?;
                self.hit(Production::Tuple);
                self.edit(EditKind::ParenForBracket, pos..pos + 1);
                return self.array(pos, shape, b')');
            }
            b'"' | b'\'' if is_triple_quote(&self.src[pos..]) => {
                return self.error("a Python triple-quoted string", pos);
            }
            b'"' | b'\'' => {
                let mark = self.edits.len();
                let (text, end) = self.string(pos, byte, Some(shape))?;
                let inner_quotes = self.edits[mark..].iter().any(|e| e.kind == EditKind::EscapeInnerQuote);
                let body = &self.src[pos + 1..end.saturating_sub(1).max(pos + 1)];
                let raw_controls = self.edits[mark..].iter().any(|e| e.kind == EditKind::EscapeControlChar);
                let doubled_edge = body.as_bytes().starts_with(&[byte]) || body.as_bytes().ends_with(&[byte, byte]);
                if inner_quotes && (doubled_edge || body.starts_with("\"\"") || body.ends_with("\"\"")) {
                    // `"Find TODOs"""`, `''notes/todo.md''`: quotes doubled at an edge of the
                    // string: which of them is the text's own is unclear (`-N "" -f k` inside is
                    // an empty word).
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a string with unescaped quotes doubled: which quote closes it is unclear",
                        pos,
                    ));
                }
                self.refuse_second_string_reading(mark, byte, body)?;
                if byte == b'"' {
                    if let Some(at) = super::second_reading::foreign_escape(body) {
                        // Python's escape, if the document turns out to be Python's (see `finish`).
                        let body_start = body.as_ptr() as usize - self.src.as_ptr() as usize;
                        self.python_escape_at.get_or_insert(body_start + at);
                    }
                }
                if (inner_quotes && has_escape(body, RAW_STRING_ESCAPES, false))
                    || (raw_controls && has_escape(body, CONTROL_ESCAPES, true))
                {
                    // Quotes left unescaped say the text was written raw; its `\"` and `\n` may
                    // then be the text's own (`sed -i "s/\"a\"/\"b\"/"`) or JSON's: two readings.
                    return Err(SyntaxError::new(
                        RefusalCode::Ambiguous,
                        "a string with unescaped inner quotes and JSON escapes: written raw or escaped is unclear",
                        pos,
                    ));
                }
                // An inner quote that closes a quoted word (`"/opt/My App/bin/app" --config
                // "a.toml"`): the value may be text that starts with a quoted word.
                if self.shapes.is_textual(shape)
                    && self.first_inner_quote_closes(mark)
                    && self.choices.choose(2) == TAKE_AS_STRUCTURE
                {
                    self.edits.truncate(mark);
                    return self.bare_run(pos, shape);
                }
                return Ok((Node { span: pos..end, kind: NodeKind::Str(text) }, end));
            }
            b',' | b'}' | b']' | b':' => return self.error("expected a value", pos),
            _ => {}
        }
        let rest = &self.src[pos..];
        if let Some(len) = lexeme::number_len(rest) {
            if self.value_ends_at(pos + len) || self.wide_comma_before_key(pos + len) {
                if let Some(number) = lexeme::json_number(&rest[..len]) {
                    if rest[len..].trim().is_empty() {
                        // `"timeout": 1` and the end, nothing closed: the digits may go on.
                        return Err(SyntaxError::new(
                            RefusalCode::Truncated,
                            "the input ends inside a number: its digits may go on",
                            pos,
                        ));
                    }
                    self.hit(Production::Number);
                    return Ok((Node { span: pos..pos + len, kind: NodeKind::Number(number) }, pos + len));
                }
            }
        }
        if let Some(len) = lexeme::literal_len(rest) {
            if self.value_ends_at(pos + len) || self.wide_comma_before_key(pos + len) {
                self.hit(Production::Literal);
                let kind = match &rest[..len] {
                    "true" => NodeKind::Bool(true),
                    "false" => NodeKind::Bool(false),
                    _ => NodeKind::Null,
                };
                return Ok((Node { span: pos..pos + len, kind }, pos + len));
            }
        }
        self.refuse_scalar_then_value(pos)?;
        self.bare_run(pos, shape)
    }

    /// `bare_run = (any char up to a terminator)+`: unquoted text, ended by what would
    /// continue the enclosing container (in an object: a comma or line break before a key).
    fn bare_run(&mut self, start: usize, shape: ShapeId) -> Parsed {
        let bytes = self.src.as_bytes();
        let kind = self.innermost();
        // Only where the schema expects text or a list may a run hold commas and line breaks.
        // A member's value nothing constrains may be text too (an open schema's extra key).
        let textual =
            self.shapes.is_textual(shape) || (kind == Some(FrameKind::Object) && self.shapes.is_unconstrained(shape));
        self.hit(Production::BareRun);
        self.run_start = start;
        let mut i = start;
        let mut declined = None;
        while i < bytes.len() {
            let byte = bytes[i];
            match byte {
                b'"' | b'\'' => {
                    // A quoted stretch is text: no bracket or terminator inside it counts.
                    if let Some(after) = self.text_quote_at(i, start) {
                        self.refuse_stretch_hiding_separator(i, after, start, shape)?;
                        self.refuse_quoted_item_after_words(i, after, start, shape)?;
                        i = after;
                        continue;
                    }
                }
                // The object may start again here (`ls -la {"command": …`): a reading.
                b'{' if i > start && self.restart_may_begin(i) && self.choices.choose(2) == TAKE_AS_STRUCTURE => break,
                _ => {}
            }
            if let Some(close) = self.bracketed_text(i) {
                // `echo {a,b}`, `f(x, y)`: brackets that pair up hold text.
                i = close + 1;
                continue;
            }
            let ends = match byte {
                b')' if self.in_tuple() => true,
                b',' if kind != Some(FrameKind::Object) || !textual => true,
                b'\n' if !textual || kind == Some(FrameKind::Array) => true,
                b',' => {
                    let q = self.skip_blank(i + 1);
                    let past_comments = self.skip_ws_quiet(i + 1);
                    if (q >= bytes.len() || is_closer(bytes[q])) && i > start {
                        // `paste -sd,}`, `Dear Bob,}`: a trailing comma, or the text's own.
                        return Err(SyntaxError::new(
                            RefusalCode::Ambiguous,
                            "a comma ends unquoted text before the closer: a trailing comma, or the text's own?",
                            i,
                        ));
                    }
                    q >= bytes.len()
                        || is_closer(bytes[q])
                        || self.ends_at_key(q, true, false, &mut declined)
                        // `ls,/**/"flag": false`: the comment may be text, so the key is weak.
                        || (past_comments != q && self.ends_at_key(past_comments, false, false, &mut declined))
                }
                // `echo 你好，"timeout"：5`: a CJK input method's comma before a quoted key the
                // object takes is `,`; before anything else it is the text's own punctuation.
                0xEF if kind == Some(FrameKind::Object) => self.wide_comma_before_key(i),
                b'}' | b']' => self.closer_ends_run(i),
                // A blank, or a line break (VT, FF, NEL, LS, PS too): a key may follow.
                _ if self.blank_at(i) => {
                    let q = self.skip_blank(i);
                    // An unquoted word counts as a key only at a line start.
                    let newline = self.src[i..q].contains(is_line_break);
                    let quoted = matches!(bytes.get(q), Some(b'"' | b'\''));
                    let ends = q >= bytes.len()
                        || self.comment_may_end_run(q)
                        || ((newline || quoted || self.declared_word_key_at(q))
                            && self.ends_at_key(q, false, newline, &mut declined));
                    if !ends {
                        // Nothing in a run of blanks ends the value: step over it at once.
                        i = q;
                        continue;
                    }
                    true
                }
                // `<tool_input>{"command": ls -la</tool_input>`: the wrapper's close ends the value.
                b'<' | b'`' if self.wrapper_closes_at(i) => {
                    self.refuse_repeated_closing_tag(i)?;
                    true
                }
                b'\\' if lexeme::literal_escape_len(&self.src[i..]).is_some() => {
                    let q = self.skip_ws_quiet(i);
                    if !self.escape_may_end_run(i, q) {
                        // The escapes (and blanks) up to `q` are text: step over them at once.
                        i = q;
                        continue;
                    }
                    true
                }
                _ => false,
            };
            if ends {
                break;
            }
            i += 1;
        }
        let text = self.trailing_layout_or_text(start, i, textual);
        if !text.chars().any(char::is_alphanumeric) {
            return self.error("expected a value", start);
        }
        self.refuse_trailing_escape(start, text, shape)?;
        if has_escape(text, JSON_ESCAPES, false) && self.escape_starts_text(start, text, shape) {
            // `"new_string": \t\treturn err`: the escapes dropped as layout is the other reading;
            // this one is itself two (JSON escaping, or backslashes), so neither can be ruled out.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "a written-out escape at the start of unquoted text: layout, JSON escaping or a backslash",
                start,
            ));
        }
        if has_escape(text, JSON_ESCAPES, false) {
            // `import os\nprint(1)`, `print(\"hi\")`: JSON's escaping kept after its quotes were
            // lost, or text with backslashes of its own (a path, a shell escape): both readings.
            return self.error("a written-out escape inside unquoted text: JSON escaping or a backslash", start);
        }
        if self.object_has_schema() && self.key_shaped_inside(start, start + text.len()) {
            // `rm -rf dist; dry_run: true`: after a shell separator, key-shaped text may be a
            // member the tool does not take.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "key-shaped text after a separator inside unquoted text: it may be a member",
                start,
            ));
        }
        if self.ends_with_bare_key(text) {
            // `npm run dev, run_in_background:`: a member cut down to its key.
            return Err(SyntaxError::new(RefusalCode::Ambiguous, "unquoted text ending in a key of the object", start));
        }
        if is_prefixed_literal(text) {
            // `u'ls'`, `r"\d+"`: a Python string with a prefix, not text with quotes.
            return self.error("a Python string literal with a prefix", start);
        }
        if let Some(why) = literal_syntax::foreign_literal(text) {
            return Err(SyntaxError::new(RefusalCode::Ambiguous, why, start));
        }
        // Blanks after the text do not end it: a cut may fall after a line break as well.
        let runs_to_end = self.src[i..].trim().is_empty();
        if runs_to_end && !self.frames.is_empty() && self.ends_with_key_prefix(text) {
            // `rm -rf ./build, run_in_bac`: a member cut inside its key.
            return Err(SyntaxError::new(
                RefusalCode::Truncated,
                "unquoted text ending in part of a key of the object",
                start,
            ));
        }
        let python_literal = matches!(text.trim(), "True" | "False" | "None");
        if runs_to_end && !self.frames.is_empty() && !text.contains('\n') && !python_literal {
            // `{"command": rm -rf ~/` and the end, nothing closed: as a number's digits, the
            // words may go on (`~/project/build`), and the value is cut.
            return Err(SyntaxError::new(
                RefusalCode::Truncated,
                "the input ends inside unquoted text with nothing closed: its words may go on",
                start,
            ));
        }
        if runs_to_end && !self.frames.is_empty() && text.contains('\n') {
            // The object never closes: the lines after the first may be outside the call.
            return self.error("an unclosed value runs over several lines to the end", start);
        }
        if text.matches('"').count() % 2 == 1 {
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "unquoted text with an unmatched quote: where the string starts is unclear",
                start,
            ));
        }
        if kind == Some(FrameKind::Array) && text.contains(WIDE_COMMA) {
            // `["a"，b，"c"]`, `[1，2]`: a full-width comma separates quoted items; inside an
            // unquoted one it may separate too.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "a full-width comma inside an unquoted item: the item's text, or a separator?",
                start,
            ));
        }
        self.refuse_typographic_delimiters(start, text)?;
        let end = start + text.len();
        let whole_value = kind == Some(FrameKind::Object);
        if whole_value && self.object_has_schema() && self.member_shape_starts(start, end) {
            // `"description": timeout: 600000`: the member's value lost before a member, or text.
            return Err(SyntaxError::new(
                RefusalCode::Ambiguous,
                "unquoted text that starts with a member's shape: the value may have been lost before a member",
                start,
            ));
        }
        self.refuse_bare_marks(start, text, shape)?;
        Ok((Node { span: start..end, kind: NodeKind::Bare(text.to_string()) }, end))
    }
}

/// Whether a container of `closer`'s kind inside `node` (not `node` itself) is closed and then
/// followed by a comma and what it could hold: had its closer been the stray one, what follows
/// would have been inside it.
fn closed_early_before_more(node: &Node, src: &str, closer: u8) -> bool {
    let children: Vec<&Node> = match &node.kind {
        NodeKind::Object(members) => members.iter().map(|m| &m.value).collect(),
        NodeKind::Array(items) | NodeKind::List(items) => items.iter().collect(),
        _ => return false,
    };
    children.into_iter().any(|child| {
        let kind_matches = match child.kind {
            NodeKind::Object(_) => closer == b'}',
            NodeKind::Array(_) => closer == b']',
            _ => false,
        };
        let after = src[child.span.end.min(src.len())..].trim_start();
        // Inside an object only a member could follow: a key, not a value (`}, {` is an item).
        let more = after.strip_prefix(',').map(str::trim_start).is_some_and(|next| match child.kind {
            NodeKind::Object(_) => next.starts_with(|c: char| c == '"' || c == '\'' || c.is_alphabetic() || c == '_'),
            _ => !next.is_empty(),
        });
        (kind_matches && more) || closed_early_before_more(child, src, closer)
    })
}
