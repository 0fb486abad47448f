//! Another language's literal syntax written around a whole bare value: backticks, a JS regex
//! literal, a constructor call around one string, a YAML block scalar, a heredoc. Its marks
//! may be delimiters (the value is what they hold) or the value's own text: two readings, as
//! with a Python `r"…"`, so such a value is refused.

/// Why `text`, a whole bare value, reads as another language's literal, if it does.
pub(super) fn foreign_literal(text: &str) -> Option<&'static str> {
    if wrapped_in_backticks(text) {
        return Some("a value wrapped in backticks: delimiters (a template literal, a code span), or its text?");
    }
    if is_regex_literal(text) {
        return Some("a JavaScript regex literal: its slashes delimiters, or the pattern's text?");
    }
    if is_constructor_call(text) {
        return Some("a constructor call around one string (`Path('…')`): the string, or the call's text?");
    }
    if is_block_scalar(text) {
        return Some("a YAML block scalar (`|`, `>`): its indicator and indentation syntax, or text?");
    }
    if is_heredoc(text) {
        return Some("a heredoc as the value (`<<EOF … EOF`): its body, or the text with its markers?");
    }
    if is_other_null_word(text) {
        return Some("another spelling of a word for no value (`nil`, `NULL`, `none`): no value, or the word as text?");
    }
    None
}

/// `nil`, `NULL`, `Nil`, `none`, `Undefined`: a word for no value as other languages (or other
/// cases) spell it. JSON's `null`, Python's `None` and JavaScript's `undefined` have readings
/// of their own (a literal, a member left out).
pub(super) fn is_other_null_word(text: &str) -> bool {
    crate::repair::lexeme::is_null_word(text) && !matches!(text, "null" | "None" | "undefined")
}

/// `` `git status` ``, ```` ```…``` ````: the same backtick opens and closes the value.
pub(super) fn wrapped_in_backticks(text: &str) -> bool {
    text.len() >= 3 && text.starts_with('`') && text.ends_with('`')
}

/// `/TODO|FIXME/`, `/^import .* from/m`: slashes around a body with no unescaped slash that
/// holds a regex operator (a path such as `/tmp/` holds none), then flags only.
fn is_regex_literal(text: &str) -> bool {
    let Some(inner) = text.strip_prefix('/') else {
        return false;
    };
    let flags_start = inner.trim_end_matches(|c| "dgimsuy".contains(c)).len();
    let Some(body) = inner[..flags_start].strip_suffix('/') else {
        return false;
    };
    let bytes = body.as_bytes();
    let unescaped_slash = bytes.iter().enumerate().any(|(i, &b)| b == b'/' && (i == 0 || bytes[i - 1] != b'\\'));
    !body.is_empty() && !body.contains('\n') && !unescaped_slash && body.contains(|c| "|^$*+?()[]\\".contains(c))
}

/// `Path('notes/todo.md')`, `pathlib.Path("x")`, `String('a')`: a capitalized (dotted) name
/// and, in its parentheses, one quoted string and nothing else.
fn is_constructor_call(text: &str) -> bool {
    let Some(open) = text.find('(') else {
        return false;
    };
    let (name, call) = text.split_at(open);
    let last = name.rsplit('.').next().unwrap_or(name);
    let name_ok = last.starts_with(|c: char| c.is_ascii_uppercase())
        && name.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    let Some(inside) = call.strip_prefix('(').and_then(|c| c.strip_suffix(')')) else {
        return false;
    };
    let inside = inside.trim();
    let quoted = inside.len() >= 2
        && matches!(inside.as_bytes()[0], b'"' | b'\'')
        && inside.as_bytes()[inside.len() - 1] == inside.as_bytes()[0]
        && !inside[1..inside.len() - 1].contains(inside.as_bytes()[0] as char);
    name_ok && quoted
}

/// `|`, `|-`, `>+`, `|2` alone on the value's first line, more lines after it.
fn is_block_scalar(text: &str) -> bool {
    let Some((first, rest)) = text.split_once('\n') else {
        return false;
    };
    let first = first.trim_end();
    let indicator =
        first.strip_prefix(['|', '>']).is_some_and(|r| r.chars().all(|c| matches!(c, '-' | '+' | '1'..='9')));
    indicator && !rest.trim().is_empty()
}

/// `<<EOF`, `<<-'END'`, `<<~EOS` on the value's first line, more lines after it.
fn is_heredoc(text: &str) -> bool {
    let Some((first, rest)) = text.split_once('\n') else {
        return false;
    };
    let Some(marker) = first.trim_end().strip_prefix("<<") else {
        return false;
    };
    let word = marker.trim_start_matches(['-', '~']).trim_matches(['\'', '"']);
    !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !rest.trim().is_empty()
}

/// Whether a place in a bare run lies inside the body of a shell heredoc the run opened
/// (`cat > f <<'EOF'⏎---⏎`) whose terminating line has not come, or inside a shell
/// single-quoted string that runs over lines (`git commit -m 'feat: x⏎⏎`): key-shaped lines
/// there are the document's (`description: …` in front matter), whatever the schema says. The
/// parser asks at places further and further on: each line is read once, so a long run with a
/// key-shaped line on every line costs linear time.
#[derive(Debug, Default)]
pub(super) struct ShellQuoting {
    /// Where the run read starts.
    start: usize,
    /// Where the line being read starts, and how far its quotes are read.
    line_start: usize,
    read_to: usize,
    /// The shell string open where the reading stopped.
    quote: Quote,
    /// The heredocs opened and not ended: each one's word, and whether tabs may precede it.
    awaited: Vec<(String, bool)>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Quote {
    #[default]
    None,
    Single,
    Double,
}

impl ShellQuoting {
    fn new(start: usize) -> Self {
        ShellQuoting { start, line_start: start, read_to: start, ..ShellQuoting::default() }
    }

    /// Whether `at` in `src`, in the bare run from `start`, lies inside such a body or string.
    pub(super) fn inside(&mut self, src: &str, start: usize, at: usize) -> bool {
        if self.start != start || at < self.read_to {
            *self = ShellQuoting::new(start);
        }
        while let Some(end) = memchr::memchr(b'\n', &src.as_bytes()[self.read_to..at]).map(|n| self.read_to + n) {
            self.read_quotes(src, end);
            self.finish_line(&src[self.line_start..end]);
            (self.line_start, self.read_to) = (end + 1, end + 1);
        }
        self.read_quotes(src, at);
        !self.awaited.is_empty() || self.quote == Quote::Single
    }

    /// Follows the shell's quotes up to `to`, outside heredoc bodies: a `'` opens a string
    /// unless it is an apostrophe between letters (`don't`); inside `"…"` it is text.
    fn read_quotes(&mut self, src: &str, to: usize) {
        let from = std::mem::replace(&mut self.read_to, to);
        if !self.awaited.is_empty() {
            return;
        }
        let letter = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        for (n, byte) in src.as_bytes()[from..to].iter().enumerate() {
            let at = from + n;
            self.quote = match (self.quote, byte) {
                (Quote::None, b'"') => Quote::Double,
                (Quote::Double, b'"') if src.as_bytes()[at - 1] != b'\\' => Quote::None,
                (Quote::None, b'\'')
                    if !(letter(src[..at].chars().next_back()) && letter(src[at + 1..].chars().next())) =>
                {
                    Quote::Single
                }
                (Quote::Single, b'\'') => Quote::None,
                (quote, _) => quote,
            };
        }
    }

    fn finish_line(&mut self, line: &str) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some((word, tabs)) = self.awaited.first() {
            // Bash ends the body at a line that is the word exactly (`<<-`: after leading tabs).
            let line = if *tabs { line.trim_start_matches('\t') } else { line };
            if line == word {
                self.awaited.remove(0);
            }
            return;
        }
        self.awaited.extend(heredoc_words(line));
    }
}

/// The terminating words of the heredocs a command line opens, with whether `<<-` lets tabs
/// precede them (`<<EOF`, `<<-'END'`, `<< "X"`, `<<\EOF`, `<<$'EOF'`, `<<"$END"`; not a
/// here-string, `<<<`, nor a shift, `1 << 2`).
fn heredoc_words(line: &str) -> Vec<(String, bool)> {
    let mut words = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("<<") {
        let after = &rest[at + 2..];
        if after.starts_with('<') {
            rest = after.trim_start_matches('<');
            continue;
        }
        let tabs = after.starts_with('-');
        let marker = after.trim_start_matches(['-', '~']).trim_start_matches([' ', '\t']);
        let marker = marker.strip_prefix('\\').or_else(|| marker.strip_prefix('$')).unwrap_or(marker);
        let quote = marker.chars().next().filter(|c| matches!(c, '\'' | '"'));
        let body = quote.map_or(marker, |q| &marker[q.len_utf8()..]);
        // A quoted word runs to its quote (`'E O'`); an unquoted one to a blank or a shell
        // metacharacter (`E-1`, `END.txt`).
        let len = match quote {
            Some(q) => body.find(q).unwrap_or(body.len()),
            None => body.find(|c: char| c.is_whitespace() || "<>|&;()'\"".contains(c)).unwrap_or(body.len()),
        };
        // A word as heredocs are named (`EOF`, `END_SQL`, `$END` quoted), not a shift's operand (`1 << 2`).
        if len > 0 && (quote.is_some() || body.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')) {
            words.push((body[..len].to_string(), tabs));
        }
        rest = &body[len..];
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_languages_literals_around_a_whole_value() {
        for text in [
            "`git status --short`",
            "`docs/setup.md`",
            "/TODO|FIXME/",
            "/^import .* from/m",
            "Path('notes/todo.md')",
            "pathlib.Path(\"x\")",
            "|\n  # Notes\n  - one",
            ">-\n  folded",
            "<<EOF\nWelcome\nEOF",
            "<<-'END'\nx\nEND",
        ] {
            assert!(foreign_literal(text).is_some(), "{text}");
        }
        for text in [
            "echo `date`",
            "`",
            "/tmp/",
            "/usr/local/bin/",
            "/src/*.py/x",
            "print('hi')",
            "Path('a', 'b')",
            "a | b\nc",
            "|",
            "cat <<EOF\nx\nEOF",
            "python3 - <<EOF\nprint(1)\nEOF",
            "ls -la",
        ] {
            assert!(foreign_literal(text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_heredoc_body_lasts_until_its_terminating_line() {
        for text in [
            "cat > f <<'EOF'\n---\n",
            "cat >> pubspec.yaml <<EOF\n",
            "cat <<-END\nx\n",
            "cat << \"X\"\na\n",
            "cat <<A\nx\nA\ncat <<B\n",
            "cat > f <<\\EOF\n---\n",
            "cat > f <<$'EOF'\n",
            "cat > f <<\"$END\"\n",
            "cat > f <<EOF\n\tEOF\n",
            "cat > f <<EOF\nEOF \n",
            "git commit -m 'feat: x\n\n",
            "cat > f <<E-1\nx\n",
            "cat > f <<'E O'\nx\n",
        ] {
            assert!(ShellQuoting::default().inside(text, 0, text.len()), "{text:?}");
        }
        for text in [
            "npm test\n",
            "cat <<EOF\nx\nEOF\n",
            "cat <<-END\nx\n\tEND\n",
            "git commit -m 'feat: x'\n",
            "echo don't\n",
            "echo \"users' guide\", ",
            "cat > f <<E-1\nx\nE-1\n",
            "grep x <<< \"$y\"\n",
            "cat <<EOF",
            "echo $((1 << 2))\n",
        ] {
            assert!(!ShellQuoting::default().inside(text, 0, text.len()), "{text:?}");
        }
    }
}
