//! The round-12 attack's wrong repairs around and in the foreign call syntaxes (/work/attack12):
//! wrapper tags and special tokens recognized by the start of their names, a call envelope kept
//! as the input of an open schema, attributes on a parameter tag, JSON escapes and CDATA in a
//! parameter's text, comments outside the object, foreign tags in a JSON-escaped string.
//! Graded as tests/corpus.rs grades its files; then variants of each family, and the calls
//! that must still repair.

mod grading;

use grading::grade_file;
use serde_json::{json, Value};
use toolmend::repair::{repair, Outcome, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[test]
fn the_attacks_foreign_cases_are_all_refused_or_read_as_meant() {
    let report = grade_file(include_str!("../fixtures/heldout/attack12_foreign.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 17);
}

fn options(tool: &str) -> RepairOptions {
    RepairOptions { stop_reason: Some("tool_use".into()), tool: Some(tool.into()), ..RepairOptions::default() }
}

fn compile(schema: Value) -> ToolSchema {
    ToolSchema::compile(&schema).unwrap()
}

fn bash() -> ToolSchema {
    compile(json!({"type": "object", "properties": {
        "command": {"type": "string"}, "description": {"type": "string"},
        "timeout": {"type": "integer"}, "run_in_background": {"type": "boolean"}},
        "required": ["command"], "additionalProperties": false}))
}

fn write() -> ToolSchema {
    compile(json!({"type": "object", "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
                   "required": ["file_path", "content"], "additionalProperties": false}))
}

fn outcome_of(tool: &str, schema: &ToolSchema, raw: &str) -> Outcome {
    repair(raw, Some(schema), &options(tool))
}

fn refused(tool: &str, schema: &ToolSchema, raws: &[&str]) {
    for raw in raws {
        let outcome = outcome_of(tool, schema, raw);
        assert_eq!(outcome.status, Status::Refused, "{raw:?} was handed on as {:?}", outcome.input);
    }
}

fn repairs_to(tool: &str, schema: &ToolSchema, raw: &str, expected: Value) {
    let outcome = outcome_of(tool, schema, raw);
    assert_eq!(outcome.input, Some(expected), "{raw:?}: {:?} {:?}", outcome.status, outcome.reason);
}

const APPLY: &str = r#"{"command": "terraform apply -auto-approve"}"#;

#[test]
fn only_a_call_syntaxs_own_tag_and_token_names_are_wrappers() {
    let mut raws = Vec::new();
    for tag in ["tool_result", "callout", "toolbox", "caller", "invoke_later", "function_example", "tool_calls_draft"] {
        raws.push(format!("<{tag}>\n{APPLY}\n</{tag}>"));
    }
    for token in ["dry_run", "example", "not_a_call", "tool_call_rejected"] {
        raws.push(format!("<|{token}|>{APPLY}<|end|>"));
    }
    // A namespace no call syntax uses is part of the tag's name, in JSON and in tags alike.
    raws.push(format!("<dry_run:tool_call>{APPLY}</dry_run:tool_call>"));
    raws.push(String::from(
        "<dry_run:invoke name=\"Bash\">\n<parameter name=\"command\">terraform apply</parameter>\n</dry_run:invoke>",
    ));
    // An ending token that is not one: a closing word of some other sentence.
    raws.push(format!("<|tool_call_begin|>{APPLY}<|pending|>"));
    let raws: Vec<&str> = raws.iter().map(String::as_str).collect();
    refused("Bash", &bash(), &raws);
}

#[test]
fn the_known_wrappers_and_tokens_still_repair() {
    let expected = json!({"command": "ls -la"});
    let body = r#"{"command": "ls -la",}"#;
    for raw in [
        format!("<tool_call>\n{body}\n</tool_call>"),
        format!("<minimax:tool_call>{body}</minimax:tool_call>"),
        format!("<tool_input>{body}</tool_input>"),
        format!("<|python_tag|>{body}<|eom_id|>"),
        format!("<|python_start|>{body}<|python_end|>"),
        format!("<|tool_call|>{body}<|/tool_call|>"),
        format!("<|tool_calls_section_begin|><|tool_call_begin|>functions.Bash:0<|tool_call_argument_begin|>{body}<|tool_call_end|><|tool_calls_section_end|>"),
        String::from("<minimax:tool_call>\n<invoke name=\"Bash\">\n<parameter name=\"command\">ls -la</parameter>\n</invoke>\n</minimax:tool_call>"),
    ] {
        repairs_to("Bash", &bash(), &raw, expected.clone());
    }
}

fn open_search() -> ToolSchema {
    compile(json!({"type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}}}))
}

#[test]
fn an_envelope_naming_this_tool_is_two_readings_where_the_schema_is_open() {
    refused(
        "web_search",
        &open_search(),
        &[
            "{'name': 'web_search', 'arguments': {'query': 'rust', 'max_results': 5}}",
            "{name: \"web_search\", parameters: {query: rust}}",
            "{\"name\": \"web_search\", \"input\": {\"query\": \"rust\"},}",
        ],
    );
    // A closed schema has one reading: the envelope comes off.
    let closed = compile(json!({"type": "object", "properties": {"query": {"type": "string"}},
                                "additionalProperties": false}));
    repairs_to(
        "web_search",
        &closed,
        "{'name': 'web_search', 'arguments': {'query': 'rust'}}",
        json!({"query": "rust"}),
    );
    // A schema that declares `name` and `arguments` is called with its own members.
    let members =
        compile(json!({"type": "object", "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}}}));
    repairs_to(
        "run_task",
        &members,
        "{'name': 'run_task', 'arguments': {'query': 'rust'}}",
        json!({"name": "run_task", "arguments": {"query": "rust"}}),
    );
}

#[test]
fn an_envelope_for_another_tool_is_not_this_tools_data() {
    refused("web_search", &open_search(), &["{'name': 'delete_index', 'arguments': {'query': 'rust'}}"]);
}

#[test]
fn an_envelope_may_name_an_mcp_tool_by_its_short_name() {
    let search = compile(json!({"type": "object", "properties": {"query": {"type": "string"}},
                                "required": ["query"], "additionalProperties": false}));
    let outcome = outcome_of("mcp__github__search", &search, r#"{"name": "search", "arguments": {"query": "x"}}"#);
    assert_eq!((outcome.status, outcome.input), (Status::Repaired, Some(json!({"query": "x"}))));
}

#[test]
fn an_attribute_on_a_parameter_tag_besides_its_name_refuses() {
    refused(
        "Bash",
        &bash(),
        &[
            "<invoke name=\"Bash\">\n<parameter name=\"command\">npm test</parameter>\n<parameter name=\"timeout\" unit=\"s\">600</parameter>\n</invoke>",
            "<invoke name=\"Bash\">\n<parameter encoding=\"base64\" name=\"command\">bnBtIHRlc3Q=</parameter>\n</invoke>",
            "<function=Bash>\n<parameter=command unit=s>\nnpm test\n</parameter>\n</function>",
            "<tool_call>Bash\n<arg_key>command</arg_key><arg_value encoding=\"base64\">bnBtIHRlc3Q=</arg_value>\n</tool_call>",
        ],
    );
    // DeepSeek's `string="true"` says how the value is read: it stays.
    repairs_to(
        "Bash",
        &bash(),
        "<｜DSML｜invoke name=\"Bash\">\n<｜DSML｜parameter name=\"command\" string=\"true\">ls</｜DSML｜parameter>\n</｜DSML｜invoke>",
        json!({"command": "ls"}),
    );
}

#[test]
fn json_escapes_in_a_parameters_text_are_two_readings() {
    refused(
        "Write",
        &write(),
        &[
            "<invoke name=\"Write\">\n<parameter name=\"file_path\">run.sh</parameter>\n<parameter name=\"content\">#!/bin/sh\\nnpm test\\n</parameter>\n</invoke>",
            "<function=Write>\n<parameter=file_path>\nconfig.json\n</parameter>\n<parameter=content>\n{\\\"port\\\": 8080}\n</parameter>\n</function>",
            "<parameter name=\"file_path\">C:\\\\Users\\\\bob\\\\a.txt</parameter><parameter name=\"content\">x</parameter>",
            "<parameter name=\"file_path\">a.txt</parameter><parameter name=\"content\">caf\\u00e9</parameter>",
        ],
    );
}

#[test]
fn backslashes_that_are_no_json_escaping_stay_the_texts_own() {
    // A backslash before a letter JSON does not escape: not a JSON string's body.
    repairs_to(
        "Write",
        &write(),
        "<parameter name=\"file_path\">D:\\repos\\app\\new.ts</parameter><parameter name=\"content\">x</parameter>",
        json!({"file_path": "D:\\repos\\app\\new.ts", "content": "x"}),
    );
    // Line breaks written raw: the `\n` in the code is the code's.
    repairs_to(
        "Write",
        &write(),
        "<parameter name=\"file_path\">a.py</parameter><parameter name=\"content\">s = 'a\\nb'\nprint(s)\n</parameter>",
        json!({"file_path": "a.py", "content": "s = 'a\\nb'\nprint(s)\n"}),
    );
    // Raw quotes beside the escape: not JSON-escaped.
    repairs_to(
        "Bash",
        &bash(),
        "<parameter name=\"command\">printf \"a\\nb\"</parameter>",
        json!({"command": "printf \"a\\nb\""}),
    );
    // `\b` alone is a regex's word boundary far more often than a backspace.
    let grep =
        compile(json!({"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}));
    repairs_to("Grep", &grep, "<parameter name=\"pattern\">\\bTODO\\b</parameter>", json!({"pattern": "\\bTODO\\b"}));
}

#[test]
fn a_cdata_section_is_two_readings_unless_the_markup_around_it_is_raw() {
    refused(
        "Bash",
        &bash(),
        &[
            "<invoke name=\"Bash\">\n<parameter name=\"command\"><![CDATA[grep -c \"<div\" index.html]]></parameter>\n</invoke>",
            "<parameter name=\"command\">grep -c <![CDATA[\"<div\"]]> index.html</parameter>",
        ],
    );
    // A file's own markup around its CDATA: the writer escaped nothing the XML way.
    let content = "<script><![CDATA[if (a < b) go();]]></script>\n";
    let raw =
        format!("<parameter name=\"file_path\">a.xml</parameter><parameter name=\"content\">{content}</parameter>");
    repairs_to("Write", &write(), &raw, json!({"file_path": "a.xml", "content": content}));
}

#[test]
fn a_comment_outside_the_object_is_text_around_it() {
    refused(
        "Bash",
        &bash(),
        &[
            "{\"command\": \"terraform destroy -auto-approve\"} // do not run this yet",
            "/* as root: */ {\"command\": \"apt-get install -y nginx\"}",
            "// on the staging host\n{\"command\": \"make deploy\",}",
            "{\"command\": \"make deploy\"}\n/* after the freeze */",
            "```json\n// dry run\n{\"command\": \"make deploy\"}\n```",
        ],
    );
    // A comment of presentation words only is a lead-in, as the prose would be.
    let expected = json!({"command": "make deploy"});
    for raw in ["// call\n{\"command\": \"make deploy\"}", "/* Here is the call: */ {\"command\": \"make deploy\",}"] {
        repairs_to("Bash", &bash(), raw, expected.clone());
    }
    // Inside the object a comment is still JSON5's white space.
    repairs_to("Bash", &bash(), "{\"command\": \"make deploy\" /* build it */}", expected);
}

#[test]
fn foreign_tags_after_a_close_in_an_escaped_string_are_a_second_reading() {
    refused(
        "Bash",
        &bash(),
        &[
            "{\"command\": \"npm test\\n</parameter>\\n<parameter name=\\\"run_in_background\\\">true\",}",
            "{'command': 'npm test</arg_value><arg_key>timeout</arg_key><arg_value>5'}",
        ],
    );
    // Tags a file's content opens and closes itself are its text.
    let raw = "{\"file_path\": \"a.xml\", \"content\": \"<parameter name=\\\"content\\\">ls</parameter>\",}";
    repairs_to(
        "Write",
        &write(),
        raw,
        json!({"file_path": "a.xml", "content": "<parameter name=\"content\">ls</parameter>"}),
    );
}

#[test]
fn python_booleans_in_foreign_syntax_read_as_the_lenient_rung_reads_them() {
    let raw = "<invoke name=\"Bash\">\n<parameter name=\"command\">npm run dev</parameter>\n<parameter name=\"run_in_background\">True</parameter>\n</invoke>";
    repairs_to("Bash", &bash(), raw, json!({"command": "npm run dev", "run_in_background": true}));
}
