//! Numerals whose value depends on a convention JSON does not share: read either way, the
//! number would be a guess, so they are never coerced.

/// Whether `text` is a JSON number whose digits are grouped by threes after one `.` or `,`
/// (`1.000`, `600.000`, `-12,345`): thousands grouping in one convention, decimals in another.
/// A leading `0` (`0.500`) groups no thousands.
pub fn separator_ambiguous(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let Some((whole, rest)) = digits.split_once(['.', ',']) else {
        return false;
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(whole)
        && (1..=3).contains(&whole.len())
        && !whole.starts_with('0')
        && rest.split(['.', ',']).all(|group| group.len() == 3 && all_digits(group))
}

/// Whether `text` spells a number in a way JSON does not (`0x2A`, `0o17`, `0b101`, `+5`, `.5`,
/// `5.`, `1_000`, `007`): read as a number or kept as text, two readings.
pub fn other_number_spelling(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let radix = |prefix: [&str; 2], digit: fn(&u8) -> bool| {
        prefix.iter().any(|p| unsigned.strip_prefix(p).is_some_and(|d| !d.is_empty() && d.as_bytes().iter().all(digit)))
    };
    if radix(["0x", "0X"], u8::is_ascii_hexdigit)
        || radix(["0o", "0O"], |b| (b'0'..=b'7').contains(b))
        || radix(["0b", "0B"], |b| matches!(b, b'0' | b'1'))
    {
        return true;
    }
    let decimal = unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
        && unsigned.bytes().any(|b| b.is_ascii_digit())
        && unsigned.matches('.').count() <= 1
        && !unsigned.starts_with('_')
        && !unsigned.ends_with('_');
    decimal && super::lexeme::json_number(text).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_by_threes_is_ambiguous() {
        for text in ["1.000", "600.000", "-12,345", "1.000.000", "999.999"] {
            assert!(separator_ambiguous(text), "{text}");
        }
        for text in ["0.500", "1.5", "1000", "1.0000", "1234.567", "3.14", "1.00", "abc.def"] {
            assert!(!separator_ambiguous(text), "{text}");
        }
    }

    #[test]
    fn spellings_json_lacks() {
        for text in ["0x2A", "0XFF", "-0x1", "0o17", "0b101", "+5", ".5", "5.", "1_000", "007", "-01"] {
            assert!(other_number_spelling(text), "{text}");
        }
        for text in ["42", "-1.5e3", "0", "0x", "2024-01-01", "v1.2", "1.2.3", "abc", "_1", "0xZZ", "."] {
            assert!(!other_number_spelling(text), "{text}");
        }
    }
}
