//! The eighth attack review's open WRONG findings on key shapes (/work/attack/round8: Q1, G1,
//! M1) and its LOST regression L1: a single-quoted stretch that spans a member, a quoted key
//! glued to a shell separator and a declared name whose odd colon is glued to its value are
//! second readings; a CJK line `词：…` in a multi-line value is text again.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::schema::ToolSchema;

fn deploy(closed: bool) -> ToolSchema {
    schema(
        json!({"service": {"type": "string"}, "branch": {"type": "string"}, "env": {"type": "string"},
               "force": {"type": "boolean"}}),
        &["service"],
        closed,
    )
}

fn multiedit() -> ToolSchema {
    closed(
        json!({"file_path": {"type": "string"},
               "edits": {"type": "array", "minItems": 1, "items": {"type": "object", "additionalProperties": false,
                         "required": ["old_string", "new_string"],
                         "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"},
                                        "replace_all": {"type": "boolean", "default": false}}}}}),
        &["file_path", "edits"],
    )
}

/// Each deploy input refused with the closed schema and the open one alike.
fn deploy_refuses(inputs: &[&str]) {
    refuses(&deploy(true), inputs);
    refuses(&deploy(false), inputs);
}

#[test]
fn a_single_quoted_stretch_that_spans_a_member_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": grep -rn 'TODO src, \"run_in_background\": true, \"description\": \"find the users' notes\"}",
            "{\"command\": echo the '90s, \"run_in_background\": true, \"description\": \"print users' data\"}",
            "{\"command\": echo 'a}, \"run_in_background\": true, \"description\": \"users' x\"}",
            "{\"command\": ls 'src, timeout: 5, description: list the users' files}",
            "{\"command\": rm -rf 'build, \"dangerouslyDisableSandbox\": true, \"description\": \"the users' cache\"}",
        ],
    );
    refuses(
        &edit(),
        &[
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": x = 'bar, \"replace_all\": true, \"z\": '}",
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": x 'bar, replace_all: true, y: '}",
        ],
    );
    refuses(
        &multiedit(),
        &[
            "{\"file_path\": \"/a.md\", \"edits\": [{\"old_string\": the 'old, \"new_string\": \"new\"}, {\"old_string\": \"users' guide\", \"new_string\": \"admins' guide\"}]}",
            "{\"file_path\": \"/a.md\", \"edits\": [{\"old_string\": a, \"new_string\": the 'b}, {\"old_string\": \"users' c\", \"new_string\": d}]}",
        ],
    );
    deploy_refuses(&[
        "{\"service\": web 'api, branch: main, env: users' prod}",
        "{\"service\": web 'api, \"force\": true, \"env\": \"users' prod\"}",
    ]);
}

#[test]
fn single_quoted_text_still_repairs() {
    let cases = [
        ("{\"command\": echo 'it''s'}", "echo 'it''s'"),
        ("{\"command\": grep -rn 'TODO' src}", "grep -rn 'TODO' src"),
        ("{\"command\": python -c 'print(1)'; ls}", "python -c 'print(1)'; ls"),
        ("{\"command\": awk -F, '{print $1}' data.csv}", "awk -F, '{print $1}' data.csv"),
        ("{\"command\": git commit -m 'fix: retries, note: none'}", "git commit -m 'fix: retries, note: none'"),
        ("{\"command\": echo the users' guide && ls}", "echo the users' guide && ls"),
        ("{\"command\": echo 'a, b' 'c'}", "echo 'a, b' 'c'"),
        ("{\"command\": sed -i 's/}, {/},{/g' data.json}", "sed -i 's/}, {/},{/g' data.json"),
        (
            "{\"command\": curl -d '{\"name\": \"x\", \"env\": \"prod\"}' http://localhost/api}",
            "curl -d '{\"name\": \"x\", \"env\": \"prod\"}' http://localhost/api",
        ),
        (
            "{\"command\": python -c 'import json; print(json.dumps({\"a\": 1, \"timeout\": 2}))'}",
            "python -c 'import json; print(json.dumps({\"a\": 1, \"timeout\": 2}))'",
        ),
    ];
    for (raw, command) in cases {
        repairs_to(&bash(), raw, json!({"command": command}));
    }
    repairs_to(
        &bash(),
        "{\"command\": echo \"users' guide\", \"description\": \"the admins' notes\"}",
        json!({"command": "echo \"users' guide\"", "description": "the admins' notes"}),
    );
    repairs_to(
        &bash(),
        "{\"command\": git commit -m \"fix: timeout: 0\"}",
        json!({"command": "git commit -m \"fix: timeout: 0\""}),
    );
}

#[test]
fn a_quoted_key_glued_to_a_separator_is_a_key() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev;\"run_in_background\": true}",
            "{\"command\": npm run dev;'run_in_background': true}",
            "{\"command\": npm run dev (\"run_in_background\": true)}",
            "{\"command\": rm -rf dist;\"dry_run\": true}",
            "{\"command\": npm run dev&&\"run_in_background\": true}",
            "{\"command\": npm run dev|\"run_in_background\": true}",
            "{\"command\": sleep 10;\"timeout\"\u{FF1A}600000}",
        ],
    );
    refuses(&edit(), &["{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar;\"replace_all\": true}"]);
    refuses(
        &multiedit(),
        &["{\"file_path\": \"/a.py\", \"edits\": [{\"old_string\": foo, \"new_string\": bar;'replace_all': true}]}"],
    );
    deploy_refuses(&["{\"service\": web;\"branch\": \"main\"}", "{\"service\": web(\"force\": true)}"]);
}

#[test]
fn a_quote_after_a_separator_is_still_text() {
    let cases = [
        ("{\"command\": a;b}", "a;b"),
        ("{\"command\": python3 -c \"print(1)\";ls}", "python3 -c \"print(1)\";ls"),
        ("{\"command\": make;\"./run\" --fast}", "make;\"./run\" --fast"),
        ("{\"command\": echo a|\"tr\" a b}", "echo a|\"tr\" a b"),
    ];
    for (raw, command) in cases {
        repairs_to(&bash(), raw, json!({"command": command}));
    }
    repairs_to(
        &edit(),
        "{\"file_path\": \"/a.py\", \"old_string\": f(\"x\"), \"new_string\": f(\"y\")}",
        json!({"file_path": "/a.py", "old_string": "f(\"x\")", "new_string": "f(\"y\")"}),
    );
}

#[test]
fn a_declared_name_with_an_odd_colon_glued_to_its_value_is_a_key() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev run_in_background\u{FF1A}true}",
            "{\"command\": npm run dev run_in_background\u{2236}true}",
            "{\"command\": sleep 10 timeout\u{FF1A}600000}",
            "{\"command\": sleep 10 timeout::600000}",
            "{\"command\": npm run dev run_in_background::true}",
            "{\"command\": sleep 10 \"timeout\"\u{FF1A}600000}",
            "{\"command\": sleep 10 'timeout'\u{FF1A}600000}",
        ],
    );
    refuses(&grep(), &["{\"pattern\": TODO -C\u{FF1A}3}"]);
    refuses(
        &edit(),
        &[
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar replace_all\u{FF1A}true}",
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar replace_all::true}",
        ],
    );
    refuses(
        &multiedit(),
        &["{\"file_path\": \"/a.py\", \"edits\": [{\"old_string\": foo, \"new_string\": bar replace_all\u{FF1A}true}]}"],
    );
    deploy_refuses(&["{\"service\": web branch\u{FF1A}main}", "{\"service\": web force::true}"]);
}

#[test]
fn a_path_or_an_undeclared_name_before_an_odd_colon_is_text() {
    let cases = [
        ("{\"command\": cargo test timeout::tests}", "cargo test timeout::tests"),
        ("{\"command\": cargo doc -p std::fs::write}", "cargo doc -p std::fs::write"),
        ("{\"command\": echo 状态\u{FF1A}完成}", "echo 状态\u{FF1A}完成"),
        ("{\"command\": echo \"状态\"\u{FF1A}完成}", "echo \"状态\"\u{FF1A}完成"),
    ];
    for (raw, command) in cases {
        repairs_to(&bash(), raw, json!({"command": command}));
    }
}

#[test]
fn a_cjk_line_with_a_fullwidth_colon_is_text() {
    repairs_to(
        &write(),
        // No line break before the `}`: in a one-line object it may be the content's own.
        "{\"file_path\": \"/a.md\", \"content\": # 项目\n作者\u{FF1A}张三}",
        json!({"file_path": "/a.md", "content": "# 项目\n作者\u{FF1A}张三"}),
    );
    repairs_to(
        &write(),
        "{\"file_path\": \"/a.md\", \"content\": 概要\n手順\u{FF1A}make を実行}",
        json!({"file_path": "/a.md", "content": "概要\n手順\u{FF1A}make を実行"}),
    );
    repairs_to(
        &edit(),
        "{\"file_path\": \"/a.md\", \"old_string\": 版本\u{FF1A}1.0\n作者\u{FF1A}张三, \"new_string\": 版本\u{FF1A}2.0\n作者\u{FF1A}张三}",
        json!({"file_path": "/a.md", "old_string": "版本\u{FF1A}1.0\n作者\u{FF1A}张三",
               "new_string": "版本\u{FF1A}2.0\n作者\u{FF1A}张三"}),
    );
    repairs_to(
        &bash(),
        "{\"command\": git commit -m 修复\u{FF1A}超时处理\n\n详情\u{FF1A}增加重试}",
        json!({"command": "git commit -m 修复\u{FF1A}超时处理\n\n详情\u{FF1A}增加重试"}),
    );
}

#[test]
fn a_key_shaped_line_with_a_fullwidth_colon_stays_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev\nrun_in_background\u{FF1A}true}",
            "{\"command\": rm -rf dist\ndry_run\u{FF1A}true}",
            "{\"command\": ls\ndescription\u{FF1A}列出文件}",
            "{\"command\": rm -rf dist\n删除\u{FF1A}true}",
        ],
    );
    refuses(&edit(), &["{\"file_path\": \"/a.md\", \"old_string\": a, \"new_string\": b\nreplace_all\u{FF1A}true}"]);
    deploy_refuses(&["{\"service\": web\nbranch\u{FF1A}主干}"]);
}
