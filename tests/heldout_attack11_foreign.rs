//! The round-11 attack's wrong repairs in the foreign-syntax reading (/work/attack11): a wrapper
//! naming another tool in a spelling the check did not read, JSON5-only escapes inside a
//! parameter's JSON value, a string parameter wholly in quotes. Graded as tests/corpus.rs grades
//! its files: a result no accepted outcome allows is a wrong repair. Then variants of each
//! family, and the calls that must still repair.

mod grading;

use grading::grade_file;
use serde_json::json;
use toolmend::repair::{repair, Outcome, RepairOptions, Status};
use toolmend::schema::ToolSchema;

fn options(tool: &str) -> RepairOptions {
    RepairOptions { stop_reason: Some("tool_use".into()), tool: Some(tool.into()), ..RepairOptions::default() }
}

#[test]
fn the_attacks_foreign_syntax_cases_are_all_refused() {
    let report = grade_file(include_str!("../fixtures/heldout/attack11_foreign.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 42);
}

fn delete_file() -> ToolSchema {
    ToolSchema::compile(&json!({"type": "object", "properties": {"path": {"type": "string"}},
                                "required": ["path"], "additionalProperties": false}))
    .unwrap()
}

const DELETE: &str = "mcp__filesystem__delete_file";

fn outcome_of(tool: &str, schema: &ToolSchema, raw: &str) -> Outcome {
    repair(raw, Some(schema), &options(tool))
}

fn refused(tool: &str, schema: &ToolSchema, raws: &[&str]) {
    for raw in raws {
        let outcome = outcome_of(tool, schema, raw);
        assert_eq!(outcome.status, Status::Refused, "{raw:?} was handed on as {:?}", outcome.input);
    }
}

#[test]
fn another_tools_name_in_any_wrapper_spelling_refuses_around_json_and_tags() {
    let body = r#"{"path": "src/main.rs"}"#;
    let tags = r#"<parameter name="path">src/main.rs</parameter>"#;
    let mut raws = Vec::new();
    for open in [
        "<invoke name=read_file>",
        "<invoke NAME=\"read_file\">",
        "<invoke name = 'read_file'>",
        "<invoke tool_name=“read_file”>",
        "<invoke name=\"delete_file\" id=\"read_file\">",
        "<invoke type=\"read_file\" name=\"delete_file\">",
        "<invoke name:\"read_file\">",
        "<function read_file>",
        "<function = read_file>",
        "<tool_call name=read_file>",
        "<tool_call read_file>",
        "<invoke name=\"delete_file>",
    ] {
        let close = if open.starts_with("<function") { "</function>" } else { "</invoke>" };
        raws.push(format!("{open}{body}{close}"));
        raws.push(format!("{open}\n{tags}\n{close}"));
    }
    for fence in ["```read_file", "```json read_file", "```Read", "```python_exec"] {
        raws.push(format!("{fence}\n{body}\n```"));
    }
    raws.push(String::from("<tool_call>\n<function name=read_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n</function>\n</tool_call>"));
    let raws: Vec<&str> = raws.iter().map(String::as_str).collect();
    refused(DELETE, &delete_file(), &raws);
}

#[test]
fn the_tools_own_name_in_any_wrapper_spelling_still_repairs() {
    let expected = json!({"path": "src/main.rs"});
    let body = r#"{"path": "src/main.rs"}"#;
    for raw in [
        String::from("<invoke name=\"delete_file\">\n<parameter name=\"path\">src/main.rs</parameter>\n</invoke>"),
        String::from("<invoke NAME = 'mcp__filesystem__delete_file'>\n<parameter name=\"path\">src/main.rs</parameter>\n</invoke>"),
        String::from("<tool_call>\n<function=delete_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n</function>\n</tool_call>"),
        String::from("<tool_call>\n<function = delete_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n</function>\n</tool_call>"),
        format!("```json\n{body}\n```"),
        format!("```JSON\n{body}\n```"),
        format!("```delete_file\n{body}\n```"),
        format!("<invoke name=delete_file>{body}</invoke>"),
    ] {
        let outcome = outcome_of(DELETE, &delete_file(), &raw);
        assert_eq!(outcome.input, Some(expected.clone()), "{raw:?}: {:?} {:?}", outcome.status, outcome.reason);
    }
}

fn multi_edit() -> ToolSchema {
    ToolSchema::compile(&json!({"type": "object", "properties": {
        "file_path": {"type": "string"},
        "edits": {"type": "array", "items": {"type": "object", "properties": {
            "old_string": {"type": "string"}, "new_string": {"type": "string"}},
            "required": ["old_string", "new_string"], "additionalProperties": false}}},
        "required": ["file_path", "edits"], "additionalProperties": false}))
    .unwrap()
}

#[test]
fn json5_only_escapes_in_a_parameters_json_are_two_readings() {
    refused(
        "MultiEdit",
        &multi_edit(),
        &[
            // A line continuation with CRLF, in single quotes, through GLM's tags.
            "<parameter name=\"file_path\">a.sh</parameter><parameter name=\"edits\">[{\"old_string\": \"a \\\r\n b\", \"new_string\": \"c\"}]</parameter>",
            "<parameter=file_path>\na.sh\n</parameter>\n<parameter=edits>\n[{old_string: 'x \\\ny', new_string: 'z'}]\n</parameter>",
            "<arg_key>file_path</arg_key><arg_value>a.py</arg_value><arg_key>edits</arg_key><arg_value>[{\"old_string\": \"print('it\\'s')\", \"new_string\": \"pass\"}]</arg_value>",
        ],
    );
    // In a `'` string `\'` is the only way to write the quote: one reading.
    let raw = "<parameter name=\"file_path\">a.py</parameter><parameter name=\"edits\">[{'old_string': 'it\\'s', 'new_string': 'it is'}]</parameter>";
    let outcome = outcome_of("MultiEdit", &multi_edit(), raw);
    let expected = json!({"file_path": "a.py", "edits": [{"old_string": "it's", "new_string": "it is"}]});
    assert_eq!(outcome.input, Some(expected), "{:?}", outcome.reason);
}

#[test]
fn a_string_parameter_wholly_in_quotes_is_two_readings_unless_one_fits() {
    let read = ToolSchema::compile(&json!({"type": "object", "properties": {"file_path": {"type": "string"}},
                                           "required": ["file_path"], "additionalProperties": false}))
    .unwrap();
    refused(
        "Read",
        &read,
        &[
            "<parameter name=\"file_path\">'/tmp/a b.txt'</parameter>",
            "<parameter name=\"file_path\">“/tmp/a b.txt”</parameter>",
            "<parameter=file_path>\n\"/tmp/a b.txt\"\n</parameter>",
            "<arg_key>file_path</arg_key><arg_value>\"/tmp/a\\tb.txt\"</arg_value>",
        ],
    );
    // Quotes inside the value are its own: one reading.
    let raw = "<parameter name=\"file_path\">\"a\" and \"b\".txt</parameter>";
    assert_eq!(outcome_of("Read", &read, raw).input, Some(json!({"file_path": "\"a\" and \"b\".txt"})));
    // Only the unquoted text fits the pattern.
    let ids =
        ToolSchema::compile(&json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
                                          "required": ["id"]}))
        .unwrap();
    let outcome = outcome_of("Get", &ids, "<parameter name=\"id\">\"abc\"</parameter>");
    assert_eq!(outcome.input, Some(json!({"id": "abc"})), "{:?}", outcome.reason);
}
