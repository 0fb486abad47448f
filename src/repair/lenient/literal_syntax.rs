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
}
