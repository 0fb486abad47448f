//! The fifth attack review's open key spellings (/work/attack/round5 R3, R4, R6, and round 4's
//! leftovers): key-shaped text in a bare value that the member grammar cannot read, or that sits
//! mid-line, is still a second reading — the call is refused, not repaired as text.

mod attack_common;

use attack_common::*;
use serde_json::json;

#[test]
fn a_colon_written_twice_or_as_equals_before_a_value_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev, run_in_background::true}",
            "{\"command\": rm -rf dist, dry_run::true}",
            "{\"command\": rm -rf dist, dry_run=true}",
            "{\"command\": sleep 10\ntimeout=600000}",
            "{\"command\": rm -rf dist, dry_run\u{FF1A}true}",
            "{\"command\": sleep 10, \"timeout\"=600000}",
            "{\"command\": sleep 10, 'timeout'::600000}",
            "{\"command\": sleep 10,timeout=600000}",
        ],
    );
}

/// A guard, not a finding: the `=` rule must leave shell assignments alone.
#[test]
fn a_shell_assignment_is_text() {
    repairs_to(&bash(), "{\"command\": FOO=bar npm test}", json!({"command": "FOO=bar npm test"}));
    repairs_to(&bash(), "{\"command\": cd web && FOO=1 npm test}", json!({"command": "cd web && FOO=1 npm test"}));
    repairs_to(&bash(), "{\"command\": echo a, FOO=1 npm test}", json!({"command": "echo a, FOO=1 npm test"}));
    repairs_to(&bash(), "{\"command\": cargo test repair::lenient}", json!({"command": "cargo test repair::lenient"}));
    // On a line of its own, `=` assigns a variable unless the name is a declared key.
    repairs_to(
        &bash(),
        "{\"command\": cat > .env <<EOF\nA=1\nDEBUG=true\nEOF}",
        json!({"command": "cat > .env <<EOF\nA=1\nDEBUG=true\nEOF"}),
    );
    repairs_to(
        &bash(),
        "{\"command\": set -e\nOUT=dist\nmkdir -p $OUT}",
        json!({"command": "set -e\nOUT=dist\nmkdir -p $OUT"}),
    );
    // Right after a comma, `=` continues a list of assignments.
    repairs_to(
        &bash(),
        "{\"command\": helm upgrade web --set a=1,b=2}",
        json!({"command": "helm upgrade web --set a=1,b=2"}),
    );
}

#[test]
fn a_key_decorated_with_at_or_backticks_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev, @run_in_background: true}",
            "{\"command\": rm -rf dist, @dry_run: true}",
            "{\"command\": npm run dev, `run_in_background`: true}",
            "{\"command\": rm -rf dist, `dry_run`: true}",
            "{\"command\": rm -rf dist, **dry_run**: true}",
            "{\"command\": rm -rf dist, @dry_run=true}",
        ],
    );
}

#[test]
fn a_quoted_declared_name_before_a_value_mid_line_is_a_second_reading() {
    refuses(&bash(), &["{\"command\": sleep 10 \"timeout\" 600000}", "{\"command\": sleep 10; \"timeout\" 600000}"]);
    // A quoted word that names a key, before more words, is a shell argument.
    repairs_to(&bash(), "{\"command\": grep -rn \"timeout\" src}", json!({"command": "grep -rn \"timeout\" src"}));
}

#[test]
fn a_compact_member_after_a_shell_separator_is_a_second_reading() {
    refuses(&bash(), &["{\"command\":rm -rf dist;dry_run:true}", "{\"command\":npm run dev;run_in_background:true}"]);
}

#[test]
fn a_member_cut_down_to_its_key_is_a_second_reading() {
    refuses(&bash(), &["{\"command\": rm -rf dist, dry_run:}", "{\"command\": rm -rf dist, dry_run:"]);
}

#[test]
fn a_key_whose_value_does_not_parse_is_a_second_reading() {
    refuses(&bash(), &["{\"command\": rm -rf dist, confirm: -}", "{\"command\": rm -rf dist\nconfirm: -}"]);
}

#[test]
fn a_zero_width_character_inside_a_key_is_part_of_it() {
    for invisible in ['\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}'] {
        let raw = format!("{{\"command\": ls, time{invisible}out: 600000}}");
        refuses(&bash(), &[raw.as_str()]);
    }
}

#[test]
fn a_key_quoted_twice_after_the_values_own_closing_quote_is_a_second_reading() {
    refuses(&bash(), &["{\"command\": npm run dev\", \"\"run_in_background\": true}"]);
    // Quoted words with commas between them are text.
    repairs_to(&bash(), "{\"command\": echo \"a\", \"b\"}", json!({"command": "echo \"a\", \"b\""}));
}

/// A closed object nested in a closed object, both declaring `force`.
fn config() -> toolmend::schema::ToolSchema {
    closed(
        json!({"name": {"type": "string"}, "force": {"type": "boolean"},
               "config": {"type": "object", "additionalProperties": false,
                          "properties": {"template": {"type": "string"}, "force": {"type": "boolean"}}}}),
        &["name"],
    )
}

#[test]
fn a_brace_inside_a_string_does_not_stand_for_a_lost_closer() {
    refuses(&config(), &["{\"name\": \"x\", \"config\": {\"template\": \"a}\", \"force\": true}"]);
    // Every closer there: the member is the inner object's.
    repairs_to(
        &config(),
        "{\"name\": x, \"config\": {\"template\": \"a}\", \"force\": true}}",
        json!({"name": "x", "config": {"template": "a}", "force": true}}),
    );
}

/// `force` at the root and two objects down.
fn deep() -> toolmend::schema::ToolSchema {
    closed(
        json!({"force": {"type": "boolean"},
               "a": {"type": "object", "additionalProperties": false, "properties": {
                   "b": {"type": "object", "additionalProperties": false,
                         "properties": {"x": {"type": "integer"}, "force": {"type": "boolean"}}}}}}),
        &[],
    )
}

#[test]
fn a_member_the_grandparent_declares_after_two_lost_closers_is_a_second_reading() {
    let deep = deep();
    refuses(&deep, &["{\"a\": {\"b\": {\"x\": 1, \"force\": true}"]);
}

#[test]
fn a_decorated_or_invisible_key_after_a_shell_separator_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": rm -rf dist; @dry_run: true}",
            "{\"command\": rm -rf dist `dry_run`: true}",
            "{\"command\": npm run dev; **run_in_background**: true}",
            "{\"command\": sleep 10; time\u{200B}out: 600000}",
        ],
    );
    // A shell assignment after a separator is text.
    repairs_to(&bash(), "{\"command\": cd web; DRY_RUN=true make}", json!({"command": "cd web; DRY_RUN=true make"}));
}

/// Round 6's W1 and L3: a wrapper's close (a fence, a closing tag) ends what is open as the
/// input's end does, so the lost-closer choice is the same inside a wrapper as without one.
#[test]
fn a_wrapper_close_ends_open_objects_as_the_input_end_does() {
    let deep = deep();
    refuses(
        &deep,
        &[
            "```json\n{\"a\": {\"b\": {\"x\": 1, \"force\": true}\n```",
            "<tool_input>{\"a\": {\"b\": {\"x\": 1, \"force\": true}</tool_input>",
        ],
    );
    refuses(&nested(), &["```json\n{\"query\": x, \"options\": {\"verbose\": true, \"force\": true}\n```"]);
    // A closing sentence is no wrapper close: with the `}` lost, `now.` may be an argument.
    refuses(
        &bash(),
        &["Running: {\"command\": \"sudo shutdown -h\" now.", "Running: {\"command\": \"git push\"\nnow."],
    );
    // Only the root's `}` lost inside a fence: one reading.
    repairs_to(&bash(), "```json\n{\"command\": \"ls\"\n```", json!({"command": "ls"}));
    repairs_to(&bash(), "<tool_input>{\"command\": \"ls\"</tool_input>", json!({"command": "ls"}));
}

/// Round 6's W3: inside a bracketed list at a member, an item in a member's unreadable
/// spelling is in doubt as it is in a bare value.
#[test]
fn an_item_in_a_members_spelling_is_a_second_reading() {
    let files = closed(
        json!({"files": {"type": "array", "items": {"type": "string"}}, "force": {"type": "boolean"}}),
        &["files"],
    );
    refuses(
        &files,
        &[
            "{\"files\": [build, dist, force=true]}",
            "{\"files\": [build, dist, @force: true]}",
            "{\"files\": [build, dist, `force`: true]}",
            "{\"files\": [build, dist, force\u{FF1A}true]}",
        ],
    );
    repairs_to(&files, "{\"files\": [build, dist]}", json!({"files": ["build", "dist"]}));
    repairs_to(&files, "{\"files\": [a=1,b=2]}", json!({"files": ["a=1", "b=2"]}));
}
