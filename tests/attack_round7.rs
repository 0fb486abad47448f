//! The sixth attack review's open WRONG repairs (/work/attack/round6 W2–W8 and the wrapper's
//! closing tag kept in a bare value): key-shaped text in a bare value, in whatever spelling,
//! before whatever value, is a second reading — the call is refused, not repaired as text.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::schema::ToolSchema;

/// An MCP deploy tool: string options a bare word can fill.
fn deploy() -> ToolSchema {
    closed(
        json!({"service": {"type": "string"}, "branch": {"type": "string"}, "env": {"type": "string"},
               "force": {"type": "boolean"}}),
        &["service"],
    )
}

fn files() -> ToolSchema {
    closed(
        json!({"files": {"type": "array", "items": {"type": "string"}}, "force": {"type": "boolean"},
               "groups": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}),
        &[],
    )
}

#[test]
fn an_unreadable_spelling_before_a_bare_word_is_a_second_reading() {
    refuses(
        &grep(),
        &[
            "{\"pattern\": TODO;glob:*.rs}",
            "{\"pattern\": TODO `glob`: *.rs}",
            "{\"pattern\": TODO, glob\u{FF1A} *.rs}",
            "{\"pattern\": TODO\nglob=*.rs}",
            "{\"pattern\": password;output_mode:content}",
            "{\"pattern\": secret, path::/etc}",
        ],
    );
    refuses(
        &bash(),
        &[
            "{\"command\": ls;description:list}",
            "{\"command\": ls\ndescription=list files}",
            "{\"command\": npm run dev, run_in_background\u{FF1A} yes}",
            "{\"command\": rm -rf dist;dry_run:yes}",
            "{\"command\": rm -rf dist, dry_run::yes}",
            "{\"command\": rm -rf dist `dry_run`: yes}",
            "{\"command\": sleep 10;timeout:long}",
            "{\"command\": npm run dev\nrun_in_background=yes}",
            "{\"command\": make && dry_run:yes}",
        ],
    );
    refuses(
        &deploy(),
        &[
            "{\"service\": web;branch:main}",
            "{\"service\": web, @branch: main}",
            "{\"service\": web, env::prod}",
            "{\"service\": web\nenv=prod}",
            "{\"service\": web, **branch**: release}",
        ],
    );
}

#[test]
fn an_item_in_a_members_spelling_is_a_second_reading_in_any_list() {
    refuses(
        &files(),
        &[
            "{\"files\": [build, dist, force=True]}",
            "{\"files\": [build, dist, force=yes]}",
            "{\"files\": [build, dist, force true]}",
            "{\"files\": [build, dist, force\u{2236} true]}",
            "{\"files\": [build, dist, \u{201C}force\u{201D}: true]}",
            "{\"files\": [build, dist, for\u{200B}ce: true]}",
            "{\"files\": [build, dist, **force**: true]}",
            "{\"groups\": [[a, b, force=true]]}",
            "{\"groups\": [[a], [b, force true]]}",
        ],
    );
}

#[test]
fn a_wrappers_closing_tag_ends_a_bare_value() {
    for raw in ["<tool_input>{\"command\": ls -la</tool_input>", "<tool_input>\n{\"command\": ls -la\n</tool_input>"] {
        let outcome = run(raw, &bash());
        let text = outcome.input.map(|input| input.to_string()).unwrap_or_default();
        assert!(!text.contains("</tool_input>"), "{raw:?} kept the closing tag: {text}");
    }
    repairs_to(&bash(), "<tool_input>{\"command\": ls -la</tool_input>", json!({"command": "ls -la"}));
}

#[test]
fn a_colon_look_alike_after_a_key_is_a_colon() {
    for colon in
        ['\u{2236}', '\u{FE55}', '\u{FE13}', '\u{A789}', '\u{0589}', '\u{05C3}', '\u{02D0}', '\u{02F8}', '\u{FF1A}']
    {
        let raws = [
            format!("{{\"command\": rm -rf dist, dry_run{colon} true}}"),
            format!("{{\"command\": npm run dev, run_in_background{colon} true}}"),
            format!("{{\"command\": echo \"a\", run_in_background{colon} true}}"),
        ];
        refuses(&bash(), &raws.iter().map(String::as_str).collect::<Vec<_>>());
        let edit_raw = format!(
            "{{\"file_path\": \"/a.py\", \"old_string\": \"foo\", \"new_string\": bar, replace_all{colon} true}}"
        );
        refuses(&edit(), &[edit_raw.as_str()]);
    }
}

#[test]
fn a_key_in_typographic_quotes_is_a_second_reading() {
    for (open, close) in [
        ("\u{201C}", "\u{201D}"),
        ("\u{2018}", "\u{2019}"),
        ("\u{FF02}", "\u{FF02}"),
        ("\u{AB}", "\u{BB}"),
        ("\u{201E}", "\u{201C}"),
    ] {
        let raws = [
            format!("{{\"command\": npm run dev, {open}run_in_background{close}: true}}"),
            format!("{{\"command\": npm run dev {open}run_in_background{close}: true}}"),
            format!("{{\"command\": rm -rf dist, {open}dry_run{close}: true}}"),
            format!("{{\"command\": sleep 10 {open}timeout{close}: 600000}}"),
        ];
        refuses(&bash(), &raws.iter().map(String::as_str).collect::<Vec<_>>());
        let edit_raw =
            format!("{{\"file_path\": \"/a.py\", \"old_string\": \"foo\", \"new_string\": bar, {open}replace_all{close}: true}}");
        refuses(&edit(), &[edit_raw.as_str()]);
    }
}

#[test]
fn an_invisible_character_in_or_after_a_key_is_part_of_it() {
    for invisible in
        ['\u{200E}', '\u{200F}', '\u{202E}', '\u{2066}', '\u{FE0F}', '\u{180E}', '\u{E0041}', '\u{0301}', '\u{034F}']
    {
        let raws = [
            format!("{{\"command\": ls, time{invisible}out: 600000}}"),
            format!("{{\"command\": npm run dev, run_in{invisible}_background: true}}"),
            format!("{{\"command\": npm run dev, run_in_background{invisible}: true}}"),
        ];
        refuses(&bash(), &raws.iter().map(String::as_str).collect::<Vec<_>>());
        let edit_raw = format!(
            "{{\"file_path\": \"/a.py\", \"old_string\": \"foo\", \"new_string\": bar, replace{invisible}_all: true}}"
        );
        refuses(&edit(), &[edit_raw.as_str()]);
    }
}

#[test]
fn every_line_break_and_blank_ends_a_line_or_a_word() {
    for brk in ["\u{0B}", "\u{0C}", "\r", "\u{85}", "\u{2028}", "\u{2029}"] {
        let raws = [
            format!("{{\"command\": npm run dev{brk}run_in_background: true}}"),
            format!("{{\"command\": sleep 10{brk}timeout=600000}}"),
            format!("{{\"command\": npm run dev{brk}@run_in_background: true}}"),
            format!("{{\"command\": npm run dev{brk}`run_in_background`: true}}"),
        ];
        refuses(&bash(), &raws.iter().map(String::as_str).collect::<Vec<_>>());
        let edit_raw =
            format!("{{\"file_path\": \"/a.py\", \"old_string\": \"foo\", \"new_string\": bar{brk}replace_all: true}}");
        refuses(&edit(), &[edit_raw.as_str()]);
    }
    for blank in ["\u{A0}", "\u{2002}", "\u{2009}", "\u{3000}"] {
        let raws = [
            format!("{{\"command\": npm run dev{blank}run_in_background: true}}"),
            format!("{{\"command\": npm run dev;{blank}run_in_background: true}}"),
            format!("{{\"command\": sleep 10{blank}timeout: 600000}}"),
        ];
        refuses(&bash(), &raws.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

#[test]
fn a_key_in_foreign_syntax_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev, run_in_background=True}",
            "{\"command\": npm run dev; run_in_background=False}",
            "{\"command\": npm run dev\nrun_in_background=True}",
            "{\"command\": sleep 10, timeout=None}",
            "{\"command\": npm run dev, **run_in_background:** true}",
            "{\"command\": npm run dev, {run_in_background: true}}",
            "{\"command\": npm run dev {run_in_background: true}}",
            "{\"command\": npm run dev [run_in_background: true]}",
            "{\"command\": npm run dev, [run_in_background]: true}",
            "{\"command\": npm run dev, (run_in_background): true}",
            "{\"command\": npm run dev, #run_in_background: true}",
            "{\"command\": npm run dev, :run_in_background => true}",
            "{\"command\": npm run dev\n<parameter name=\"run_in_background\">true</parameter>}",
            "{\"command\": npm run dev</parameter><parameter name=\"run_in_background\">true}",
            "{\"command\": sleep 10 <parameter name=\"timeout\">600000</parameter>}",
            "{\"command\": npm run dev, **`run_in_background`**: true}",
            "{\"command\": npm run dev, @`run_in_background`: true}",
            "{\"command\": npm run dev, <run_in_background>: true}",
            "{\"command\": npm run dev, ~~run_in_background~~: true}",
        ],
    );
    refuses(&deploy(), &["{\"service\": web, branch=None}", "{\"service\": web, **force:** true}"]);
}

/// Guards, not findings: text that only looks a little like a member still repairs.
#[test]
fn text_that_is_not_a_members_spelling_still_repairs() {
    let cases = [
        ("{\"command\": FOO=bar npm test}", "FOO=bar npm test"),
        ("{\"command\": echo a, FOO=1 npm test}", "echo a, FOO=1 npm test"),
        ("{\"command\": helm upgrade web --set a=1,b=2}", "helm upgrade web --set a=1,b=2"),
        ("{\"command\": ping -c 1 fe80::1}", "ping -c 1 fe80::1"),
        ("{\"command\": scp build.tgz user@host:/tmp/}", "scp build.tgz user@host:/tmp/"),
        ("{\"command\": curl -H \"Content-Type: x\" localhost}", "curl -H \"Content-Type: x\" localhost"),
        ("{\"command\": echo \u{201C}done\u{201D}: all good}", "echo \u{201C}done\u{201D}: all good"),
        ("{\"command\": echo \u{2018}it\u{2019}s fine}", "echo \u{2018}it\u{2019}s fine"),
        ("{\"command\": cargo test repair::lenient}", "cargo test repair::lenient"),
        ("{\"command\": make DEBUG=1 all}", "make DEBUG=1 all"),
        ("{\"command\": cd web; DRY_RUN=true make}", "cd web; DRY_RUN=true make"),
        ("{\"command\": date +%H:%M}", "date +%H:%M"),
        ("{\"command\": echo caf\u{E9}\u{A0}ok}", "echo caf\u{E9}\u{A0}ok"),
        ("{\"command\": npm run dev\nexport timeout=600000}", "npm run dev\nexport timeout=600000"),
        ("{\"command\": npx mocha --timeout=600000}", "npx mocha --timeout=600000"),
        ("{\"command\": jq '.[] | select(.timeout: 5)' x}", "jq '.[] | select(.timeout: 5)' x"),
        (
            "{\"command\": kubectl patch deploy web -p '{\"spec\": {\"timeout\": 30}}'}",
            "kubectl patch deploy web -p '{\"spec\": {\"timeout\": 30}}'",
        ),
    ];
    for (raw, command) in cases {
        repairs_to(&bash(), raw, json!({ "command": command }));
    }
    repairs_to(&files(), "{\"files\": [a=1,b=2]}", json!({"files": ["a=1", "b=2"]}));
    repairs_to(&files(), "{\"files\": [build, dist]}", json!({"files": ["build", "dist"]}));
    repairs_to(&deploy(), "{\"service\": web-api}", json!({"service": "web-api"}));
    // Markdown's `name`: description lines, and a call's keyword argument, are text. (No line
    // break before the `}`: in a one-line object it may be the content's own, a second reading.)
    repairs_to(
        &write(),
        "{\"file_path\": \"/API.md\", \"content\": - `timeout`: seconds to wait\n- `retries`: count}",
        json!({"file_path": "/API.md", "content": "- `timeout`: seconds to wait\n- `retries`: count"}),
    );
    repairs_to(
        &edit(),
        "{\"file_path\": \"/a.py\", \"old_string\": f(a=1), \"new_string\": f(a=2)}",
        json!({"file_path": "/a.py", "old_string": "f(a=1)", "new_string": "f(a=2)"}),
    );
}

/// Round 6's L1: inside a quoted stretch on one line no key is looked for, as the scan of the
/// run looks for none; a key outside the quotes is still a second reading.
#[test]
fn a_key_inside_shell_quotes_is_text_and_one_outside_is_not() {
    let cases = [
        "git commit -m \"fix: handle timeout: 0 case\"",
        "echo 'x; timeout: 5'",
        "echo \"npm run dev, run_in_background: true\"",
        "echo \"a;dry_run:yes\" done",
    ];
    for command in cases {
        repairs_to(&bash(), &format!("{{\"command\": {command}}}"), json!({ "command": command }));
    }
    refuses(
        &bash(),
        &[
            "{\"command\": git commit -m \"wip\" ;dry_run:yes}",
            "{\"command\": echo \"a\" run_in_background\u{2236} true}",
            "{\"command\": echo 'a' timeout: 600000}",
            "{\"command\": echo \"a\"; `dry_run`: yes}",
            "{\"command\": npm run dev\", \"\"run_in_background\": true}",
        ],
    );
}
