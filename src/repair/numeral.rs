//! Numerals whose value depends on a convention JSON does not share: read either way, the
//! number would be a guess, so they are never coerced. And numerals the CLI cannot hold: its
//! `JSON.parse` reads every number as a double, so a number token the repair writes must mean
//! the same value there (a 19-digit id rounds to another id, `1e400` becomes Infinity).

use super::outcome::{Refusal, RefusalCode};

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

/// Whether `text`, a numeral the model wrote as text (a string, a foreign parameter's value), may
/// be handed on as a JSON number: a JSON number, not grouped by threes, that a double holds.
pub fn coercible(text: &str) -> bool {
    super::lexeme::json_number(text).is_some() && !separator_ambiguous(text) && holds_in_a_double(text)
}

/// Whether the JSON number `text` reads in a JavaScript double as the value it spells: the
/// double's shortest spelling is the same decimal number (`0.1` is; `9007199254740993`,
/// `1e400` and `1e-400` are not).
pub fn holds_in_a_double(text: &str) -> bool {
    let Ok(double) = text.parse::<f64>() else {
        return false;
    };
    if !double.is_finite() {
        return false;
    }
    match (decimal(text), decimal(&format!("{double:e}"))) {
        (Some(written), Some(read)) => written == read,
        _ => false,
    }
}

/// Whether every number in `value` (a reading the repair writes out) holds in a double.
pub fn numbers_hold_in_a_double(value: &serde_json::Value) -> bool {
    number_lost_in_a_double(value).is_none()
}

/// The first number in `value` that a double does not hold, as written.
fn number_lost_in_a_double(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::Number(number) => Some(number.to_string()).filter(|text| !holds_in_a_double(text)),
        Value::Array(items) => items.iter().find_map(number_lost_in_a_double),
        Value::Object(map) => map.values().find_map(number_lost_in_a_double),
        _ => None,
    }
}

/// Refuses `value`, JSON the repair read from inside a string (`source` says which: a
/// parameter's, the whole input's, an envelope's `arguments`), when it holds a number a double
/// does not hold: the string is that number's one exact form, and decoded, the CLI's
/// `JSON.parse` reads another (`"[9007199254740993]"` gives …992), as with a numeral that is a
/// string's whole text (never coerced: [`coercible`]).
pub fn decoded_exactly(value: &serde_json::Value, source: &str, at: Option<usize>) -> Result<(), Refusal> {
    match number_lost_in_a_double(value) {
        None => Ok(()),
        Some(number) => Err(Refusal::new(
            RefusalCode::Ambiguous,
            format!(
                "{source} holds JSON with the number {number}, which the CLI's doubles cannot hold: decoded, it becomes another number"
            ),
            at,
        )),
    }
}

/// Whether `value`, read as JSON from a parameter's `text` in a foreign call syntax (text, as a
/// string's content is), may be written out: a numeral that is the whole text only if
/// [`coercible`], and every number inside only if a double holds it.
pub fn writes_out_exactly(text: &str, value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Number(_) => coercible(text.trim()),
        other => numbers_hold_in_a_double(other),
    }
}

/// A decimal numeral's value as (negative, significant digits, exponent of the last digit), with
/// no leading or trailing zeros (zero: no digits, no sign); `None` when it is not one or its
/// exponent does not fit.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some((false, String::new(), 0));
    }
    let exponent: i64 = match exponent {
        Some(exponent) => exponent.parse().ok()?,
        None => 0,
    };
    let dropped = i64::try_from(significant.len() - trimmed.len()).ok()?;
    let fraction_len = i64::try_from(fraction.len()).ok()?;
    let last = exponent.checked_sub(fraction_len)?.checked_add(dropped)?;
    Some((negative, trimmed.to_string(), last))
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
    fn a_double_holds_what_it_reads_back_as() {
        let held = ["0", "-0", "0.0", "5000", "0.1", "-1.5e3", "1E2", "9007199254740992", "18014398509481984"];
        for text in held.into_iter().chain(["1.7976931348623157e308", "5e-324", "1e21", "123.4560", "0.000001"]) {
            assert!(holds_in_a_double(text), "{text}");
        }
        let lost = ["1184457398123945991", "9007199254740993", "1e400", "-1e400", "1e-400", "0.30000000000000001"];
        for text in lost.into_iter().chain(["12345678901234567890123", "1e99999999999999999999", "abc", ""]) {
            assert!(!holds_in_a_double(text), "{text}");
        }
    }

    #[test]
    fn decoded_json_with_a_number_a_double_cannot_hold_is_refused_and_names_it() {
        let held = serde_json::json!({"user_id": 42, "ratio": 1.5, "ids": [1, -2e3], "name": "9007199254740993"});
        assert!(decoded_exactly(&held, "the string", None).is_ok());
        for (text, number) in [
            (r#"{"user_id": 1184457398123945991}"#, "1184457398123945991"),
            (r#"[0.5, {"x": 1e400}]"#, "e+400"),
            (r#"{"ratio": 0.30000000000000001}"#, "0.30000000000000001"),
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let refusal = decoded_exactly(&value, "the string", Some(3)).expect_err(text);
            assert_eq!((refusal.code, refusal.position), (RefusalCode::Ambiguous, Some(3)));
            assert!(refusal.message.contains(number), "{text}: {}", refusal.message);
        }
    }

    #[test]
    fn only_plain_numerals_a_double_holds_are_coercible() {
        for text in ["600", "0.500", "-12.5", "2.5e3"] {
            assert!(coercible(text), "{text}");
        }
        for text in ["600.000", "2.000", "1184457398123945991", "1e400", "0x10", "+5", " 5", "5 "] {
            assert!(!coercible(text), "{text}");
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
