//! The EBNF in grammars/ and the parser agree on the productions, and every production is
//! exercised by at least one fixture.

use serde_json::Value;
use std::collections::BTreeSet;
use toolmend::repair::lenient::{parse_document, ParseOptions, Production, ProductionSet};
use toolmend::schema::ShapeSet;

fn grammar_productions() -> BTreeSet<String> {
    include_str!("../grammars/tool-input.ebnf")
        .lines()
        .filter_map(|line| {
            let (name, _) = line.split_once('=')?;
            let name = name.trim();
            let starts_line = !line.starts_with(' ');
            (starts_line && !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                .then(|| name.to_string())
        })
        .collect()
}

#[test]
fn every_parser_production_is_in_the_grammar_file() {
    let in_file = grammar_productions();
    for production in Production::ALL {
        assert!(in_file.contains(production.name()), "{} missing from the EBNF", production.name());
    }
}

#[test]
fn every_production_is_exercised_by_a_fixture() {
    let fixtures = [
        include_str!("../fixtures/corpus/toolcalls.jsonl"),
        include_str!("../fixtures/corpus/toolcalls-families.jsonl"),
        include_str!("../fixtures/repair/cases.jsonl"),
    ];
    let mut seen = ProductionSet::default();
    for line in fixtures.iter().flat_map(|f| f.lines()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let shapes = ShapeSet::compile(&case["schema"]).unwrap();
        if let Ok(document) = parse_document(case["raw"].as_str().unwrap(), &shapes, ParseOptions::default()) {
            seen = seen.union(document.productions);
        }
    }
    let missing: Vec<&str> = Production::ALL.iter().filter(|p| !seen.contains(**p)).map(|p| p.name()).collect();
    assert!(missing.is_empty(), "productions no fixture exercises: {missing:?}");
}
