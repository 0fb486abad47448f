//! The round-14 attack on the foreign call syntaxes (/work/attack14/xml): decorated tags
//! (namespaced, DSML, pipes) inside a value that the damaged-tag guard did not know, a tag
//! naming two keys, a closing tag naming another key, contradictory DSML `string=` attributes,
//! and call envelopes for another tool in spellings the envelope check did not know (an id
//! beside the name, OpenAI's nested `function`, `tool`/`args`, `tool_name`/`tool_input`,
//! `recipient_name`, a `tool_use` block). All are refused now; eight of its misses (a lead-in,
//! a fence or an ending token around XML, a Mistral call id, envelopes with an id for this
//! tool) repair, and two variants check the guard on the JSON path and the call id's limit.

mod grading;

use grading::grade_file;

#[test]
fn the_round_14_foreign_cases_are_all_right() {
    let report = grade_file(include_str!("../fixtures/heldout/attack14_foreign.jsonl"));
    assert!(report.wrong.is_empty(), "wrong repairs: {:#?}", report.wrong);
    assert!(report.missed.is_empty(), "missed: {:#?}", report.missed);
    assert_eq!(report.right, 39);
}
