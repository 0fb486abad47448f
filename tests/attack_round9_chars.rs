//! The eighth attack review's character classes (/work/attack/round8: U1, U2, D1): a key's colon,
//! the separator before it and the decoration around it spelled with characters the look ahead
//! did not know. Each class comes from Unicode's properties (confusables of `:` and `=`, their
//! compatibility forms, the comma and semicolon punctuation, the opening and closing
//! punctuation), so each test tries spellings the review did not list too; the guards are CJK,
//! Arabic and Markdown text with the same characters that names no key.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::schema::ToolSchema;

fn deploy(closed_schema: bool) -> ToolSchema {
    schema(
        json!({"service": {"type": "string"}, "branch": {"type": "string"}, "env": {"type": "string"},
               "force": {"type": "boolean"}}),
        &["service"],
        closed_schema,
    )
}

fn edit_with(new_string: &str) -> String {
    format!(r#"{{"file_path": "/a.py", "old_string": foo, "new_string": {new_string}}}"#)
}

#[test]
fn a_colon_look_alike_is_a_colon() {
    // U+A4FD, U+FE30, U+2982, U+205A, U+1804, U+1361, U+0703, U+2806, U+0704, U+A6F4, U+1365.
    let colons = ['ꓽ', '︰', '⦂', '⁚', '᠄', '፡', '܃', '⠆', '܄', '꛴', '፥'];
    for colon in colons {
        refuses(
            &bash(),
            &[
                &format!("{{\"command\": rm -rf dist, dry_run{colon} true}}"),
                &format!("{{\"command\": npm run dev, run_in_background{colon} true}}"),
                &format!("{{\"command\": npm run dev;run_in_background{colon}true}}"),
            ],
        );
        refuses(&edit(), &[&edit_with(&format!("bar, replace_all{colon} true"))]);
        refuses(&deploy(true), &[&format!("{{\"service\": web, branch{colon} main}}")]);
        refuses(&deploy(false), &[&format!("{{\"service\": web;force{colon}true}}")]);
    }
}

#[test]
fn an_equals_look_alike_is_an_equals_sign() {
    // FULLWIDTH, SMALL and MODIFIER LETTER SHORT EQUALS SIGN, KATAKANA-HIRAGANA DOUBLE HYPHEN.
    for equals in ['＝', '﹦', '꞊', '゠'] {
        refuses(
            &bash(),
            &[
                &format!("{{\"command\": rm -rf dist, dry_run{equals} true}}"),
                &format!("{{\"command\": npm run dev, run_in_background{equals}true}}"),
            ],
        );
        refuses(&edit(), &[&edit_with(&format!("bar, replace_all{equals}true"))]);
        refuses(&deploy(false), &[&format!("{{\"service\": web, force{equals}true}}")]);
    }
}

#[test]
fn cjk_and_arabic_punctuation_separate_a_key_glued_to_it() {
    // Ideographic and Arabic commas and semicolons, full-width ones, the Greek question mark
    // (it reads `;`), the full-width bar, the Ethiopic comma.
    let separators = ['、', '，', '；', '،', '؛', '\u{37E}', '｜', '﹐', '､', '፣'];
    for sep in separators {
        refuses(
            &edit(),
            &[&edit_with(&format!("bar{sep}replace_all：true")), &edit_with(&format!("bar{sep}replace_all: true"))],
        );
        refuses(
            &bash(),
            &[
                &format!("{{\"command\": npm run dev{sep}run_in_background：true}}"),
                &format!("{{\"command\": rm -rf dist{sep}dry_run:yes}}"),
                &format!("{{\"command\": rm -rf dist{sep} dry_run: yes}}"),
            ],
        );
        refuses(&deploy(true), &[&format!("{{\"service\": web{sep}branch: main}}")]);
        refuses(&deploy(false), &[&format!("{{\"service\": web{sep}env：prod}}")]);
    }
    let multiedit = closed(
        json!({"file_path": {"type": "string"},
               "edits": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                   "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"},
                                  "replace_all": {"type": "boolean"}}}}}),
        &["file_path", "edits"],
    );
    // A wide full stop ends a sentence as `. ` does: a key after it is a mid-line one.
    refuses(&edit(), &[&edit_with("bar。replace_all: true"), &edit_with("bar。replace_all： true")]);
    refuses(
        &bash(),
        &["{\"command\": rm -rf dist。dry_run: true}", "{\"command\": npm run dev．run_in_background: true}"],
    );
    refuses(
        &multiedit,
        &[r#"{"file_path": "/a.py", "edits": [{"old_string": foo, "new_string": bar、replace_all：true}]}"#],
    );
}

#[test]
fn a_key_in_brackets_or_quotes_of_any_script_is_decorated() {
    // Opening and closing punctuation (Ps/Pe, Pi/Pf), primes, the full-width grave.
    let pairs = [
        ("「", "」"),
        ("『", "』"),
        ("【", "】"),
        ("〔", "〕"),
        ("〈", "〉"),
        ("《", "》"),
        ("〖", "〗"),
        ("（", "）"),
        ("‹", "›"),
        ("›", "‹"),
        ("»", "«"),
        ("′", "′"),
        ("″", "″"),
        ("｀", "｀"),
        ("‚", "‘"),
        ("‚", "’"),
        ("„", "“"),
        ("‛", "’"),
    ];
    for (open, close) in pairs {
        refuses(
            &bash(),
            &[
                &format!("{{\"command\": npm run dev, {open}run_in_background{close}: true}}"),
                &format!("{{\"command\": rm -rf dist, {open}dry_run{close}: true}}"),
                &format!("{{\"command\": npm run dev {open}run_in_background{close}: true}}"),
            ],
        );
        refuses(&edit(), &[&edit_with(&format!("bar, {open}replace_all{close}: true"))]);
        refuses(&deploy(false), &[&format!("{{\"service\": web, {open}force{close}：true}}")]);
    }
}

#[test]
fn a_key_in_markup_or_a_variable_is_decorated() {
    let spellings = [
        "<code>{k}</code>",
        "<b>{k}</b>",
        "<strong>{k}</strong>",
        "<em>{k}</em>",
        "<kbd>{k}</kbd>",
        "<i>{k}</i>",
        "${{{k}}}",
        "%{k}%",
        "<code>`{k}`</code>",
    ];
    for spelling in spellings {
        let spell = |k: &str| spelling.replace("{k}", k).replace("{{", "{").replace("}}", "}");
        refuses(&bash(), &[&format!("{{\"command\": npm run dev, {}: true}}", spell("run_in_background"))]);
        // Mid-line, `$` starts a variable's expansion (`echo ${name}: done`), not a name.
        if !spelling.starts_with('$') {
            refuses(&bash(), &[&format!("{{\"command\": sleep 10 {}: 600000}}", spell("timeout"))]);
        }
        refuses(&edit(), &[&edit_with(&format!("bar, {}: true", spell("replace_all")))]);
        refuses(&deploy(true), &[&format!("{{\"service\": web, {}: main}}", spell("branch"))]);
    }
}

/// A tag around another decoration is still a key's (`<b><i>dry_run</i></b>:`): an element's
/// first closing tag need not be its own. Reading nested markup as text would hand on the
/// member inside a string, so the nesting counts as the key's spelling.
#[test]
fn a_key_in_nested_markup_is_decorated() {
    let spellings = ["<b><i>{k}</i></b>", "<strong><code>{k}</code></strong>", "<p><kbd>{k}</kbd></p>"];
    for spelling in spellings {
        let spell = |k: &str| spelling.replace("{k}", k);
        refuses(&bash(), &[&format!("{{\"command\": npm run dev, {}: true}}", spell("run_in_background"))]);
        refuses(&bash(), &[&format!("{{\"command\": sleep 10 {}: 600000}}", spell("timeout"))]);
        refuses(&edit(), &[&edit_with(&format!("bar, {}: true", spell("replace_all")))]);
        refuses(&deploy(true), &[&format!("{{\"service\": web, {}: main}}", spell("branch"))]);
    }
}

#[test]
fn a_colon_or_blanks_inside_the_decoration_still_spell_a_key() {
    refuses(
        &bash(),
        &[
            r#"{"command": rm -rf dist, "dry_run:" true}"#,
            r#"{"command": npm run dev, "run_in_background:" true}"#,
            r#"{"command": npm run dev, 'run_in_background:' true}"#,
            r#"{"command": rm -rf dist, ` dry_run `: true}"#,
            r#"{"command": rm -rf dist, ** dry_run **: true}"#,
            r#"{"command": npm run dev, ` run_in_background`: true}"#,
            r#"{"command": npm run dev, *run_in_background *: true}"#,
            r#"{"command": npm run dev, 「 run_in_background 」: true}"#,
        ],
    );
    refuses(&edit(), &[&edit_with(r#"bar, "replace_all:" true"#), &edit_with("bar, ` replace_all `: true")]);
    refuses(&deploy(false), &[r#"{"service": web, "branch:" main}"#, r#"{"service": web, ** force **: true}"#]);
}

#[test]
fn cjk_arabic_and_markup_text_that_names_no_key_still_repairs() {
    let texts = [
        "错误：文件不存在",
        "注意，错误：文件不存在，请检查、然后重试。",
        "「注意」を参照、詳細は【重要】お知らせ。",
        "【重要】お知らせ：明日は休み",
        "「注意」：必ず確認",
        "完成。结果：成功；耗时：3秒",
        "مرحبا، العالم: نص؛ المزيد",
        "身長は5′ 10″です",
        "PATH=%PATH%;/usr/bin",
        "${HOME}/bin: not found",
        "‚Hallo‘ und „Welt“: gut und schön",
        "a ‹b› c",
    ];
    for text in texts {
        let escaped = text.replace('\\', "\\\\");
        repairs_to(&bash(), &format!("{{\"command\": echo {escaped}}}"), json!({"command": format!("echo {text}")}));
        repairs_to(
            &write(),
            &format!("{{\"file_path\": \"/a.md\", \"content\": {escaped}}}"),
            json!({"file_path": "/a.md", "content": text}),
        );
    }
    let html =
        ["Read this. <b>Note</b>: see docs", "Intro\n<b>Note</b>: see docs", "a <code>x</code>: the <em>value</em>"];
    let list = "<ul>\n<li><code>content</code>: the text</li>\n<li>file_path: where</li>\n</ul>";
    for html in html.into_iter().chain(["Use <kbd>Ctrl</kbd>+<kbd>C</kbd>", "a <strong>b</strong>: c", list]) {
        repairs_to(
            &write(),
            &format!("{{\"file_path\": \"/a.html\", \"content\": {html}}}"),
            json!({"file_path": "/a.html", "content": html}),
        );
    }
}
