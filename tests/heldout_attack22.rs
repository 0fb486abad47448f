//! Attack round 22 (realistic MCP schemas: GitHub, filesystem, Postgres, Slack, Playwright,
//! Linear): refused — in a string the repair decodes (a quoted string of damaged JSON, JSON
//! inside a parameter or a string), `\b` or `\f` (a regex's `\bTODO\b`, LaTeX's `\frac`), and
//! `\t` or `\r` between letters inside a word, or `\n` there when the word names a file
//! (`cd src\tests`, `docs\new\readme.txt`): a backslash of the text's own, or a control character?
//! Seventeen controls (real `\n\t` layout, `\r\n`, a backslash a parameter's text keeps, lost
//! braces, bare text) still repair, and four of its misses do now: an array item whose `}` was
//! lost right before `, {` and the next item, and a URL in angle brackets (`<https://x.y|link>`)
//! ending unquoted text.

mod grading;

use grading::grade_file;

#[test]
fn the_round22_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack22.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 35);
}
