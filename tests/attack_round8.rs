//! The eighth attack review's regressions (/work/attack/round8: L0, R2, R1, C1, H8): what the
//! round-6 fixes broke. URLs with a query string repair again; a number right before the
//! closer, a key behind a decoration left open and a member written whole in backticks are
//! second readings again; only a closing tag the wrapper opened ends a bare value.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::schema::ToolSchema;

fn webfetch() -> ToolSchema {
    closed(json!({"url": {"type": "string"}, "prompt": {"type": "string"}}), &["url", "prompt"])
}

fn files() -> ToolSchema {
    closed(json!({"files": {"type": "array", "items": {"type": "string"}}, "max": {"type": "integer"}}), &[])
}

#[test]
fn a_url_query_string_is_not_a_shell_separator() {
    repairs_to(
        &webfetch(),
        "{\"url\": https://www.google.com/search?q=rust+serde&hl=en, \"prompt\": \"Summarize\"}",
        json!({"url": "https://www.google.com/search?q=rust+serde&hl=en", "prompt": "Summarize"}),
    );
    repairs_to(
        &bash(),
        "{\"command\": curl https://api.example.com/v1/items?limit=10&offset=20}",
        json!({"command": "curl https://api.example.com/v1/items?limit=10&offset=20"}),
    );
    // Without a `?` before it, or with blanks, `&` is still the shell's.
    refuses(
        &bash(),
        &["{\"command\": rm -rf dist&dry_run=true}", "{\"command\": npm run dev & run_in_background: true}"],
    );
}

#[test]
fn a_number_right_before_the_closer_is_a_value() {
    refuses(&bash(), &["{\"command\": pytest -x tests/ retries: 3}", "{\"command\": sleep 10 timeout: 600000}"]);
    refuses(&files(), &["{\"files\": [build, dist max: 3]}"]);
}

#[test]
fn a_key_behind_a_decoration_left_open_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev `run_in_background: true}",
            "{\"command\": rm -rf dist **dry_run: true}",
            "{\"command\": rm -rf dist `dry_run: true`}",
            "{\"command\": npm run dev, `run_in_background: true`}",
            "{\"command\": rm -rf dist, **`@dry_run`**: true}",
        ],
    );
    refuses(
        &edit(),
        &[
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar `replace_all: true}",
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar, **`@replace_all`**: true}",
        ],
    );
}

#[test]
fn only_a_closing_tag_the_wrapper_opened_ends_a_bare_value() {
    repairs_to(
        &write(),
        "<tool_input>{\"file_path\": \"/a.mdx\", \"content\": <Callout>Note</Callout></tool_input>",
        json!({"file_path": "/a.mdx", "content": "<Callout>Note</Callout>"}),
    );
    repairs_to(
        &write(),
        "<tool_input>{\"file_path\": \"/t.xml\", \"content\": <function>x</function></tool_input>",
        json!({"file_path": "/t.xml", "content": "<function>x</function>"}),
    );
    repairs_to(&bash(), "<tool_input>{\"command\": ls -la</tool_input>", json!({"command": "ls -la"}));
}

/// The deploy tool as pydantic writes it: no `additionalProperties: false`.
fn open_deploy() -> ToolSchema {
    schema(
        json!({"service": {"type": "string"}, "branch": {"type": "string"}, "force": {"type": "boolean"}}),
        &["service"],
        false,
    )
}

#[test]
fn an_open_schema_gets_the_same_key_checks_as_a_closed_one() {
    // Round 8 O1: an object that takes any member takes the one a key shape spells, too.
    refuses(
        &open_deploy(),
        &[
            "{\"service\": web;branch:main}",
            "{\"service\": web;force:true}",
            "{\"service\": web `branch`: release}",
            "{\"service\": web {force: true}}",
            "{\"service\": web <parameter name=\"force\">true</parameter>}",
            "{\"service\": web;dry_run:true}",
        ],
    );
    repairs_to(&open_deploy(), "{\"service\": web api, \"force\": true}", json!({"service": "web api", "force": true}));
}

#[test]
fn claudes_parameter_tag_in_any_spelling_is_a_second_reading() {
    // Round 8 X1: the namespaced tag Claude emits, blanks, no quotes, upper case, the element form.
    let deploy = closed(json!({"service": {"type": "string"}, "branch": {"type": "string"}}), &["service"]);
    refuses(
        &deploy,
        &[
            "{\"service\": web <ns:parameter name=\"branch\">main</ns:parameter>}",
            "{\"service\": web <parameter name = \"branch\">main</parameter>}",
            "{\"service\": web <parameter name=branch>main</parameter>}",
            "{\"service\": web <PARAMETER NAME=\"branch\">main</PARAMETER>}",
            "{\"service\": web <branch>main</branch>}",
        ],
    );
    refuses(
        &edit(),
        &["{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar\n<replace_all>true</replace_all>}"],
    );
    // A tag that names no declared key is text.
    repairs_to(&deploy, "{\"service\": web <b>api</b>}", json!({"service": "web <b>api</b>"}));
}
