//! The third attack review's findings on the lenient reading (/work/attack/round3): inputs that
//! each once handed on a wrong repair. Each is now refused, or read the one way that fits; the
//! neighbouring inputs that must still be repaired are checked beside them.

mod attack_common;

use attack_common::*;
use serde_json::json;
use toolmend::repair::{repair, RefusalCode, RepairOptions, Status};

#[test]
fn key_shaped_text_the_schema_rejects_does_not_become_part_of_the_value() {
    refuses(
        &bash(),
        &[
            "{\"command\": rm -rf dist\ndry_run: true}",
            "{\"command\": npm run build, cwd: ./frontend}",
            "{\"command\": rm -rf dist\n\"dry_run\": true}",
        ],
    );
    refuses(
        &edit(),
        &[
            "{\"file_path\": /a.py, \"old_string\": foo, \"new_string\": bar, replaceAll: true}",
            "{\"file_path\": \"/a.py\", \"old_string\": foo, \"new_string\": bar, replace_all: yes}",
        ],
    );
    refuses(&grep(), &["{\"pattern\": TODO, output_mode: contents}"]);
    let outcome = run("{\"command\": rm -rf dist\ndry_run: true}", &bash());
    assert_eq!(outcome.reason.map(|r| r.code), Some(RefusalCode::Ambiguous));
    // Mid-line too: the structure reading breaks the schema with that very key.
    refuses(&bash(), &["{\"command\": grep -rn \"TODO\": src/}", "{\"command\": rm -rf dist \"dry_run\": true}"]);
    // A colon that is not `key: ` stays text.
    repairs_to(&bash(), "{\"command\": rsync -a host:/backup .}", json!({"command": "rsync -a host:/backup ."}));
}

#[test]
fn declared_names_that_are_not_identifiers_are_keys_too() {
    refuses(
        &grep(),
        &[
            "{\"pattern\": TODO, -C: 3, \"path\": \"src\"}",
            "{\"pattern\": foo, -i: true}",
            "{\"pattern\": foo\n-i: true}",
        ],
    );
    repairs_to(&grep(), "{\"pattern\": \"TODO\", -C: 3}", json!({"pattern": "TODO", "-C": 3}));
}

#[test]
fn a_quoted_key_that_lost_its_colon_after_unquoted_text_is_a_second_reading() {
    refuses(&bash(), &["{\"command\": rm -rf ./build, \"description\" \"clean build dir\"}"]);
    let glob = closed(json!({"pattern": {"type": "string"}, "path": {"type": "string"}}), &["pattern"]);
    refuses(&glob, &["{\"pattern\": **/*.py, \"path\" \"src\"}"]);
}

#[test]
fn raw_text_with_inner_quotes_keeps_no_json_escape_decoded() {
    refuses(
        &bash(),
        &[
            "{\"command\": \"sed -i \"s/\\\"a\\\"/\\\"b\\\"/\" f.json\"}",
            "{\"command\": \"git commit -m \"fix: handle \\\"quoted\\\" names\"\"}",
        ],
    );
    refuses(&write(), &["{\"file_path\": \"/a.py\", \"content\": \"print(\"a\\nb\")\"}"]);
    refuses(
        &edit(),
        &["{\"file_path\": \"/a.js\", \"old_string\": \"s = \"x\\\"y\"\", \"new_string\": \"s = \"x\\\"z\"\"}"],
    );
    // Inner quotes alone are still read as the text's own.
    repairs_to(&bash(), "{\"command\": \"echo \"hi\"\"}", json!({"command": "echo \"hi\""}));
}

#[test]
fn unquoted_text_holding_json_escapes_is_refused() {
    refuses(
        &edit(),
        &["{\"file_path\": \"/tmp/a.py\", \"old_string\": \"print(\\\"hi\\\")\", \"new_string\": print(\\\"hello\\\")}"],
    );
    refuses(
        &bash(),
        &[
            "{\"command\": find . -name \"*.py\" -exec grep -l \\\"TODO\\\" {} \\;}",
            "{\"command\": echo \\\"done\\\" > status.txt, \"description\": \"mark done\"}",
            "{\"command\": echo caf\\u00e9}",
        ],
    );
    // A shell escape JSON does not have stays text.
    repairs_to(&bash(), "{\"command\": find . -exec rm {} \\;}", json!({"command": "find . -exec rm {} \\;"}));
}

#[test]
fn shell_operators_glued_to_quoted_words_do_not_invert_the_quotes() {
    refuses(&bash(), &["{\"command\": \"cat\"|\"wc\"}", "{\"command\": \"make\"&&\"make install\"}"]);
}

#[test]
fn a_bracket_that_may_hold_the_objects_own_closer_is_two_readings() {
    refuses(&edit(), &["{\"file_path\": \"/a.js\", \"old_string\": if (x) {, \"new_string\": if (y) {}"]);
    refuses(&write(), &["{\"file_path\": \"/a.py\", \"content\": d = {}"]);
    refuses(&bash(), &["{\"command\": find . -exec rm {}"]);
    // With the object's own closer there, the pair is the text's.
    repairs_to(&bash(), "{\"command\": find . -exec rm {} +}", json!({"command": "find . -exec rm {} +"}));
}

#[test]
fn a_member_after_a_nested_object_that_lost_its_closer_may_be_the_parents() {
    refuses(
        &nested(),
        &[
            "{\"query\": \"logs\", \"options\": {\"verbose\": true, \"limit\": 10, \"force\": false}",
            "{\"query\": \"x\", \"options\": {\"verbose\": true, \"force\": true}",
            "{\n  \"query\": \"logs\",\n  \"options\": {\n    \"verbose\": true\n  ,\n  \"force\": true\n}",
        ],
    );
    // A member only the nested object declares stays in it.
    repairs_to(
        &nested(),
        "{\"query\": \"x\", \"options\": {\"force\": true, \"verbose\": true}",
        json!({"query": "x", "options": {"force": true, "verbose": true}}),
    );
}

#[test]
fn json_held_in_a_string_with_a_key_given_twice_is_not_unpacked() {
    let multiedit = closed(
        json!({"file_path": {"type": "string"},
               "edits": {"type": "array", "minItems": 1, "items": {"type": "object", "additionalProperties": false,
                   "required": ["old_string", "new_string"],
                   "properties": {"old_string": {"type": "string"}, "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}}}}}),
        &["file_path", "edits"],
    );
    refuses(
        &multiedit,
        &["{\"file_path\": \"/a.py\", \"edits\": \"[{\\\"old_string\\\": \\\"a\\\", \\\"new_string\\\": \\\"b\\\", \\\"new_string\\\": \\\"rm\\\"}]\"}"],
    );
    refuses(
        &nested(),
        &[
            "{\"query\": \"x\", \"options\": \"{\\\"force\\\": false, \\\"force\\\": true}\"}",
            "{\"query\": x, \"options\": \"{\\\"force\\\": false, \\\"force\\\": true}\"}",
        ],
    );
}

#[test]
fn an_envelope_with_both_parameters_and_arguments_is_not_unwrapped() {
    let options =
        RepairOptions { stop_reason: Some("tool_use".into()), tool: Some("Bash".into()), ..RepairOptions::default() };
    for raw in [
        "{\"name\": \"Bash\", \"parameters\": {\"command\": \"ls\"}, \"arguments\": {\"command\": \"rm -rf ~/x\"}}",
        "{\"name\": \"Bash\", \"arguments\": {\"command\": \"rm -rf ~/x\"}, \"parameters\": {\"command\": \"ls\"}",
    ] {
        let outcome = repair(raw, Some(&bash()), &options);
        assert!(!matches!(outcome.status, Status::Repaired | Status::Valid), "{raw:?}: {:?}", outcome.input);
    }
    let outcome = repair("{\"name\": \"Bash\", \"arguments\": {\"command\": \"ls\"}}", Some(&bash()), &options);
    assert_eq!(outcome.input, Some(json!({"command": "ls"})));
}

#[test]
fn a_lead_in_naming_a_parameter_in_another_case_is_not_prose() {
    refuses(&bash(), &["Timeout: 600000. {\"command\": \"npm run e2e\"}"]);
    refuses(
        &edit(),
        &["REPLACE ALL: yes. {\"file_path\": \"/a.py\", \"old_string\": \"foo\", \"new_string\": \"bar\"}"],
    );
    repairs_to(&bash(), "Here is the call: {\"command\": \"ls\"}", json!({"command": "ls"}));
}

#[test]
fn json5_numbers_are_compared_where_they_stand() {
    refuses(
        &bash(),
        &[
            "{command: 'sleep 5.0',\u{b}timeout: 5.0000000000000001}",
            "{command: 'ls', timeout: 0xFF, description: 'exit 255'}",
        ],
    );
}

#[test]
fn a_lead_in_or_closing_word_that_may_qualify_the_call_is_not_dropped() {
    refuses(
        &bash(),
        &[
            "sudo: {\"command\": \"rm -rf /var/x\"}",
            "As root: {\"command\": \"rm -rf /var/x\"}",
            "In the staging repo, run: {\"command\": \"git push --force\"}",
            "{\"command\": \"git push origin\"} main.",
            "{\"command\": \"rm -rf build\"} dist.",
        ],
    );
    repairs_to(&bash(), "Running: {\"command\": \"pytest -q\"} now.", json!({"command": "pytest -q"}));
    repairs_to(&bash(), "Sure, I'll use the tool now: {\"command\": \"ls\"}", json!({"command": "ls"}));
    repairs_to(&bash(), "Here is the call: {\"command\": \"ls\"}\nThat is the call.", json!({"command": "ls"}));
    // After the call, a sentence that says more than that may qualify it; one word alone may be
    // an argument that slipped out, unless it ends a lead-in's sentence.
    refuses(
        &bash(),
        &[
            "{\"command\": \"ls\"}\nThat lists the files.",
            "{\"command\": \"ls\"}\nThat is the call.",
            "{\"command\": \"shutdown -r\"} now please.",
            "Here is the call: {\"command\": \"rm -rf /\"} Is this the command?",
            "{\"command\": \"rm -rf build\"} Do not run this yet.",
            "{\"command\": \"sudo shutdown -h\"} now.",
        ],
    );
}

#[test]
fn quotes_doubled_inside_raw_text_are_refused() {
    refuses(&bash(), &["{\"command\": \"ls\", \"description\": \"Find TODOs\"\"\"}"]);
    // An empty quoted word inside is the text's own.
    repairs_to(&bash(), "{\"command\": \"ssh-keygen -N \"\" -f k\"}", json!({"command": "ssh-keygen -N \"\" -f k"}));
}

#[test]
fn a_lone_surrogate_the_cli_parses_is_valid_not_broken() {
    for raw in ["{\"command\": \"printf \\ud83d\"}", "{\"command\": \"ls\", \"description\": \"emoji cut \\ud83d\"}"] {
        let outcome = run(raw, &bash());
        assert_eq!(outcome.status, Status::Valid, "{raw:?}: {:?}", outcome.reason);
        assert!(toolmend::repair::is_valid_for_cli(raw), "{raw:?}");
    }
    // A pair is a pair; an escaped backslash before `u` is no escape.
    assert!(toolmend::repair::is_valid_for_cli("{\"a\": \"\\ud83d\\ude00 \\\\ud83d\"}"));
}
