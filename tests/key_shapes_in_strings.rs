//! A quoted key's shape inside a string with raw quotes (`"echo '{"level": "info"}'"`) blocks
//! the repair only where a reading that makes it a member could validate: some object open
//! there takes the name, or the value may itself be an object. Each repair below has a twin
//! with one thing changed so that the member reading could validate, and that twin refuses.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::schema::ToolSchema;

fn http(body: serde_json::Value) -> ToolSchema {
    closed(
        json!({"method": {"type": "string", "enum": ["GET", "POST"]}, "url": {"type": "string"},
               "headers": {"type": "object", "additionalProperties": {"type": "string"}}, "body": body}),
        &["method", "url"],
    )
}

#[test]
fn undeclared_keys_inside_braces_the_string_opened_are_its_text() {
    repairs_to(
        &bash(),
        r#"{"command": "echo '{"level": "info", "msg": "started"}' | jq .msg", "description": "Print"}"#,
        json!({"command": "echo '{\"level\": \"info\", \"msg\": \"started\"}' | jq .msg", "description": "Print"}),
    );
    repairs_to(
        &http(json!({"type": "string"})),
        r#"{"method": "POST", "url": "https://a.test/items", "body": "{"name": "widget", "qty": 2}"}"#,
        json!({"method": "POST", "url": "https://a.test/items", "body": "{\"name\": \"widget\", \"qty\": 2}"}),
    );
}

#[test]
fn an_undeclared_key_shape_mid_line_is_text() {
    repairs_to(
        &write(),
        "{\"file_path\": \"m.py\", \"content\": \"if __name__ == \"__main__\":\n    main()\n\"}",
        json!({"file_path": "m.py", "content": "if __name__ == \"__main__\":\n    main()\n"}),
    );
    repairs_to(
        &edit(),
        "{\"file_path\": \"u.py\", \"old_string\": \"if x == \"\":\n    return\", \"new_string\": \"if not x:\n    return\"}",
        json!({"file_path": "u.py", "old_string": "if x == \"\":\n    return", "new_string": "if not x:\n    return"}),
    );
}

#[test]
fn a_declared_name_in_the_key_shape_may_be_a_member() {
    refuses(
        &bash(),
        &[
            r#"{"command": "echo '{"description": "info", "msg": "started"}' | jq .msg"}"#,
            r#"{"command": "echo '{"level": "info", "timeout": 5}' | jq .msg"}"#,
            "{\"command\": \"if x == \"timeout\": 5\"}",
        ],
    );
    // Required and declared: the member reading may be the one that validates.
    let required = closed(json!({"command": {"type": "string"}, "level": {"type": "integer"}}), &["command", "level"]);
    refuses(&required, &["{\"command\": \"x == \"level\": 1\"}", r#"{"command": "echo '{"level": 1, "a": "b"}'"}"#]);
}

#[test]
fn an_open_object_takes_any_name() {
    let open = schema(json!({"command": {"type": "string"}, "description": {"type": "string"}}), &["command"], false);
    refuses(
        &open,
        &[
            r#"{"command": "echo '{"level": "info", "msg": "started"}' | jq .msg"}"#,
            "{\"command\": \"if __name__ == \"__main__\":\n    main()\"}",
        ],
    );
    // The enclosing object is open, the inner one closed: the name may be the outer's member.
    let nested = schema(
        json!({"opts": {"type": "object", "additionalProperties": false, "properties": {"cmd": {"type": "string"}}}}),
        &["opts"],
        false,
    );
    refuses(&nested, &["{\"opts\": {\"cmd\": \"if a == \"level\": 1\"}}"]);
    // `patternProperties` takes names `properties` does not list.
    let patterned = ToolSchema::compile(&json!({"type": "object", "additionalProperties": false,
        "properties": {"command": {"type": "string"}}, "patternProperties": {"^x-": {"type": "string"}}}))
    .unwrap();
    refuses(
        &patterned,
        &["{\"command\": \"if a == \"x-level\": \"b\"\"}", r#"{"command": "echo '{"x-a": "b", "x-c": "d"}'"}"#],
    );
}

#[test]
fn a_value_that_may_be_an_object_may_hold_the_member() {
    for body in
        [json!({"type": ["string", "object"]}), json!({}), json!({"anyOf": [{"type": "string"}, {"type": "array"}]})]
    {
        refuses(
            &http(body),
            &[r#"{"method": "POST", "url": "https://a.test/items", "body": "{"name": "widget", "qty": 2}"}"#],
        );
    }
}

#[test]
fn an_array_open_around_the_string_may_take_a_new_item_object() {
    let list = closed(json!({"commands": {"type": "array", "items": {"type": "string"}}}), &["commands"]);
    refuses(&list, &[r#"{"commands": ["echo '{"level": "info", "msg": "x"}'"]}"#]);
}

#[test]
fn an_undeclared_key_after_a_comma_or_a_quote_outside_braces_ends_the_string() {
    // The member reading breaks the schema, but the text says the string ended there: the
    // model gave a member the tool does not take, not text.
    refuses(
        &bash(),
        &[
            r#"{"command": "echo "hi" > f", "foo": "bar", "description": "d"}"#,
            r#"{"command": "echo "hi" > f" "foo": "bar"}"#,
            r#"{"command": "echo a,"foo": "b"}"#,
            "{\"command\": \"echo \"a\" b\n\"foo\": 1}",
        ],
    );
}

#[test]
fn a_brace_the_string_never_closes_does_not_hold_key_shapes() {
    // The `{` is a stray one of the text, not an object the text holds.
    refuses(
        &bash(),
        &[
            r#"{"command": "echo {"hi" > f", "foo": "bar", "description": "d"}"#,
            r#"{"command": "echo {"a": "b", "c": "d", "description": "x"}"#,
            r#"{"command": "awk '{"a": 1' f", "description": "d"}"#,
        ],
    );
}

#[test]
fn a_key_shape_that_is_a_key_is_still_a_key() {
    // A JSON key itself goes through the key rules unchanged.
    refuses(&bash(), &[r#"{"command": "ls", "level"": 1}"#]);
}
