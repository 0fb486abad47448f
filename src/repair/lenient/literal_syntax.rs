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
    let word = ["null", "none", "undefined", "nil"].iter().any(|word| text.eq_ignore_ascii_case(word));
    word && !matches!(text, "null" | "None" | "undefined")
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

/// Whether the end of `text` (a bare run read so far) lies inside the body of a shell heredoc
/// the text opened (`cat > f <<'EOF'⏎---⏎`) whose terminating line has not come, or inside a
/// shell single-quoted string that runs over lines (`git commit -m 'feat: x⏎⏎`): key-shaped
/// lines there are the document's (`description: …` in front matter), whatever the schema says.
pub(super) fn inside_shell_quoting(text: &str) -> bool {
    let mut awaited: Vec<(String, bool)> = Vec::new();
    let mut lines = text.split('\n').peekable();
    let mut quotes = 0;
    while let Some(line) = lines.next() {
        if awaited.is_empty() {
            quotes += shell_quotes(line);
        }
        if lines.peek().is_none() {
            // The line being read: a body starts only on the line after its opener.
            break;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some((word, tabs)) = awaited.first() {
            // Bash ends the body at a line that is the word exactly (`<<-`: after leading tabs).
            let line = if *tabs { line.trim_start_matches('\t') } else { line };
            if line == word {
                awaited.remove(0);
            }
            continue;
        }
        awaited.extend(heredoc_words(line));
    }
    !awaited.is_empty() || quotes % 2 == 1
}

/// The `'` of `line` that open or close a shell string: not an apostrophe between letters
/// (`don't`).
fn shell_quotes(line: &str) -> usize {
    let chars: Vec<char> = line.chars().collect();
    (0..chars.len())
        .filter(|&at| chars[at] == '\'')
        .filter(|&at| {
            let letter = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric());
            !(at > 0 && letter(chars.get(at - 1)) && letter(chars.get(at + 1)))
        })
        .count()
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
        let len = body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).unwrap_or(body.len());
        // A word as heredocs are named (`EOF`, `END_SQL`, `$END` quoted), not a shift's operand (`1 << 2`).
        if body.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || (c == '$' && quote.is_some())) {
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
        ] {
            assert!(inside_shell_quoting(text), "{text:?}");
        }
        for text in [
            "npm test\n",
            "cat <<EOF\nx\nEOF\n",
            "cat <<-END\nx\n\tEND\n",
            "git commit -m 'feat: x'\n",
            "echo don't\n",
            "grep x <<< \"$y\"\n",
            "cat <<EOF",
            "echo $((1 << 2))\n",
        ] {
            assert!(!inside_shell_quoting(text), "{text:?}");
        }
    }
}
