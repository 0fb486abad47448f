//! A closing tag after a call's JSON names its tool as an opening tag does: one that names
//! another tool (`</invoke name="rm">`, `</function=rm>`) may end that tool's call, so the
//! repair refuses; a closing tag naming this tool, or none, is dropped as the wrapper's end.

mod attack_common;

use attack_common::closed;
use serde_json::json;
use toolmend::repair::{repair, RepairOptions, Status};
use toolmend::schema::ToolSchema;

fn list_dir() -> ToolSchema {
    closed(json!({"path": {"type": "string"}, "recursive": {"type": "boolean"}}), &["path"])
}

fn outcome(raw: &str) -> (Status, Option<serde_json::Value>) {
    let options = RepairOptions {
        stop_reason: Some("tool_use".into()),
        tool: Some("list_dir".into()),
        ..RepairOptions::default()
    };
    let outcome = repair(raw, Some(&list_dir()), &options);
    (outcome.status, outcome.input)
}

#[test]
fn a_closing_tag_naming_another_tool_refuses() {
    for raw in [
        r#"<invoke name="list_dir">{"path": "/tmp"}</invoke name="delete_dir">"#,
        r#"{"path": "/tmp"}</invoke name="rm">"#,
        r#"<function=list_dir>{"path": "/tmp"}</function=rm>"#,
        r#"{"path": "/tmp"}</tool_call name=rm>"#,
        r#"{"path": "/tmp"}</invoke name="list_dir" id="rm">"#,
    ] {
        let (status, input) = outcome(raw);
        assert!(!matches!(status, Status::Repaired | Status::Valid), "{raw:?} was handed on: {input:?}");
    }
}

#[test]
fn a_closing_tag_naming_this_tool_or_none_is_the_wrappers_end() {
    for raw in [
        r#"<invoke name="list_dir">{"path": "/tmp"}</invoke>"#,
        r#"<invoke name="list_dir">{"path": "/tmp"}</invoke name="list_dir">"#,
        r#"{"path": "/tmp"}</function=list_dir>"#,
        r#"{"path": "/tmp"}</tool_call>"#,
    ] {
        assert_eq!(outcome(raw), (Status::Repaired, Some(json!({"path": "/tmp"}))), "{raw:?}");
    }
}
