//! The fourth attack review (/work/attack/round4): bypasses of round 3's rules, and the benign
//! inputs those rules refused at first. Each wrong repair is now refused; each benign input
//! checked here is repaired as meant.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::repair::{repair, RefusalCode, RepairOptions, Status};
use toolmend::schema::ToolSchema;

#[test]
fn key_shaped_text_in_any_spelling_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\":rm -rf dist,dry_run:true}",
            "{\"command\": rm -rf dist, dry_run:true}",
            "{\"command\": rm -rf dist\ndry_run:true}",
            "{\"command\": rm -rf dist, dry_run : true}",
            "{\"command\": rm -rf dist, --dry-run: true}",
            "{\"command\": rm -rf dist \"dry_run\": true}",
        ],
    );
    refuses(&edit(), &["{\"file_path\":\"/a.py\",\"old_string\":foo,\"new_string\":bar,replaceAll:true}"]);
    // A colon that starts a path or a scheme is text.
    repairs_to(&bash(), "{\"command\": scp a.txt host:/backup}", json!({"command": "scp a.txt host:/backup"}));
}

#[test]
fn a_declared_name_that_lost_its_colon_before_any_value_is_a_second_reading() {
    refuses(
        &bash(),
        &[
            "{\"command\": sleep 10, \"timeout\" 600000}",
            "{\"command\": npm run dev, \"run_in_background\" true}",
            "{\"command\": rm -rf ./build, \"description\" clean build dir}",
            "{\"command\": rm -rf ./build, description \"clean build dir\"}",
            "{\"command\": sleep 10\n\"timeout\" 600000}",
        ],
    );
    // Quoted shell words with a declared name among them are not split at it.
    refuses(&bash(), &["{\"command\": \"make\" \"description\" \"install\"}"]);
}

#[test]
fn the_objects_own_closer_is_a_reading_whatever_follows_it() {
    refuses(&edit(), &["{\"file_path\": \"/a.js\", \"old_string\": if (x) {, \"new_string\": if (y) {}\\n"]);
    let options =
        RepairOptions { stop_reason: Some("tool_use".into()), tool: Some("Bash".into()), ..RepairOptions::default() };
    let outcome = repair("Bash({\"command\": find . -exec rm {})", Some(&bash()), &options);
    assert!(!matches!(outcome.status, Status::Repaired), "{:?}", outcome.input);
    // `]` and `)` cannot close the root object, but with nothing closed at the end the text
    // may have gone on (attack round 25): cut, not repaired.
    refuses(&write(), &["{\"file_path\": \"/a.py\", \"content\": x = [1, 2]"]);
    repairs_to(
        &write(),
        "{\"file_path\": \"/a.py\", \"content\": x = [1, 2]}",
        json!({"file_path": "/a.py", "content": "x = [1, 2]"}),
    );
}

#[test]
fn a_sentence_after_the_call_that_may_qualify_it_is_not_dropped() {
    refuses(
        &bash(),
        &[
            "{\"command\": \"rm -rf build\"} Do not run this yet.",
            "{\"command\": \"npm run dev\"} Run it in the background.",
            "{\"command\": \"sudo shutdown -h\"} now.",
            "{\"command\": \"touch\"} done.",
        ],
    );
    repairs_to(&bash(), "Running: {\"command\": \"pytest -q\",} now.", json!({"command": "pytest -q"}));
    repairs_to(&bash(), "Here is the command: {\"command\": \"ls\",}", json!({"command": "ls"}));
}

#[test]
fn escapes_in_text_written_raw_are_a_second_reading() {
    refuses(
        &bash(),
        &["{\"command\": \"printf \"a\\fb\" > x\"}", "{\"command\": \"cat <<EOF > a.sh\nprintf '%s\\n' hi\nEOF\"}"],
    );
    refuses(&write(), &["{\"file_path\": \"/a.py\", \"content\": \"x = 1\ns = 'a\\nb'\nprint(s)\n\"}"]);
    refuses(&bash(), &["{\"command\": \"make\"2>\"err.log\"}"]);
    // Raw line breaks alone are escaped as the text's own.
    repairs_to(
        &write(),
        "{\"file_path\": \"/a.txt\", \"content\": \"a\nb\"}",
        json!({"file_path": "/a.txt", "content": "a\nb"}),
    );
}

#[test]
fn a_lone_surrogate_does_not_hide_a_key_given_twice() {
    let raw = r#""{\"command\": \"echo \\ud83d\", \"command\": \"rm -rf ~/x\", \"timeout\": 5}""#;
    let outcome = run(raw, &bash());
    assert!(!matches!(outcome.status, Status::Repaired), "{:?}", outcome.input);
}

#[test]
fn the_doubt_is_about_the_key_taken_from_text_only() {
    // Members on their own lines with commas lost, one value unquoted: one reading fits.
    repairs_to(
        &bash(),
        "{\"description\": List files\n\"command\": \"ls -la\"\n\"timeout\": 5000}",
        json!({"description": "List files", "command": "ls -la", "timeout": 5000}),
    );
}

#[test]
fn a_long_value_full_of_unpaired_closers_is_read_to_its_end() {
    // 100 KB of `echo } `: each `}` once asked whether the rest of the input ends the call
    // (quadratic); its time per MB is a row of `cargo bench --bench linear`.
    let decide = |times: usize| {
        let outcome = run(&format!("{{\"command\": {}}}", "echo } ".repeat(times)), &bash());
        (outcome.status, outcome.reason.map(|r| r.code))
    };
    assert_eq!(decide(15_000), decide(3));
    // The last two closers outnumber the open object: one is text or stray, two readings.
    assert_eq!(decide(3), (Status::Refused, Some(RefusalCode::Ambiguous)));
}

#[test]
fn a_unicode_line_break_starts_a_line_for_keys_too() {
    refuses(
        &bash(),
        &["{\"command\": rm -rf dist\u{85}dry_run: true}", "{\"command\": rm -rf dist\u{2028}dry_run: true}"],
    );
}

#[test]
fn without_the_roots_brace_a_nested_objects_closer_may_be_the_roots() {
    let nested = closed(
        json!({"query": {"type": "string"},
               "options": {"type": "object", "additionalProperties": false,
                           "properties": {"verbose": {"type": "boolean"}, "limit": {"type": "integer"}, "force": {"type": "boolean"}}},
               "force": {"type": "boolean"}}),
        &["query"],
    );
    refuses(&nested, &["\"query\": \"logs\", \"options\": {\"verbose\": true, \"limit\": 10, \"force\": false}"]);
}

/// Round 5 (/work/attack/round5): more spellings and positions of the same classes.
#[test]
fn round_five_key_shapes_positions_and_cut_members_refuse() {
    refuses(
        &bash(),
        &[
            "{\"command\": npm run dev; run_in_background: true}",
            "{\"command\": sleep 10 timeout: 600000}",
            "{\"command\": rm -rf dist; dry_run: true}",
            "{\"command\": rm -rf dist (dry_run: true)}",
            "{\"command\": npm run dev, timeout 600000}",
            "{\"command\": rm -rf dist, dry_rún: true}",
            "{\"command\": npm run dev, run_in_background:}",
            "{\"command\": npm run dev, \"run_in_background\"}",
            "Running: {\"command\": \"npm\"} run.",
            "{\"command\": \"shutdown -r\"} now please.",
        ],
    );
    refuses(&edit(), &["{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar, replace_all true}"]);
}

#[test]
fn a_doubt_holds_whatever_words_the_validator_uses() {
    // A root `anyOf`: the message never names the key; without the member the call fits.
    let any = ToolSchema::compile(&json!({"anyOf": [
        {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"], "additionalProperties": false},
        {"type": "object", "properties": {"script": {"type": "string"}}, "required": ["script"], "additionalProperties": false}
    ]}))
    .unwrap();
    refuses(&any, &["{\"command\": rm -rf dist, dry_run: true}"]);
}

#[test]
fn raw_line_breaks_with_escaped_quotes_are_json_escaping() {
    repairs_to(
        &write(),
        "{\"file_path\": \"/a.md\", \"content\": \"He said \\\"hi\\\"\nnext line\n\"}",
        json!({"file_path": "/a.md", "content": "He said \"hi\"\nnext line\n"}),
    );
}

#[test]
fn a_key_and_json_value_inside_unquoted_text_refuse_in_a_closed_schema() {
    refuses(
        &bash(),
        &[
            "{\"command\": rm -rf dist dry_run: true}",
            "{\"command\": rm -rf dist, dry_run： true}",
            "{\"command\": sleep 10, 'timeout' 600000}",
            "{\"command\": echo é dry_run: true}",
        ],
    );
    // Text with a colon that is no member's shape stays text.
    repairs_to(
        &bash(),
        "{\"command\": git commit -m fix: handle it}",
        json!({"command": "git commit -m fix: handle it"}),
    );
}
