//! Repair time grows linearly with input size, even for inputs built to be pathological.
//! Run: `cargo bench --bench linear`. Prints milliseconds per MB for each shape at 10 KB,
//! 100 KB, 1 MB and 10 MB: flat rows mean linear time.

use std::time::Instant;
use toolmend::repair::{repair, RepairOptions};
use toolmend::schema::ToolSchema;

type Builder = Box<dyn Fn(usize) -> String>;

fn shapes() -> Vec<(&'static str, Builder)> {
    vec![
        ("unclosed quotes", Box::new(|n| format!("{{\"title\": \"{}", "a\" ".repeat(n / 3)))),
        ("inner quotes", Box::new(|n| format!("{{\"title\": \"{}\"}}", "say \"x\" ".repeat(n / 9)))),
        ("unclosed brackets", Box::new(|n| format!("{{\"tags\": {}", "[".repeat(n)))),
        ("long bare run", Box::new(|n| format!("{{\"tags\": {}}}", "word, ".repeat(n / 6)))),
        ("deep nesting", Box::new(|n| "{\"a\":".repeat(n / 5))),
        ("many keys", Box::new(|n| format!("{{{}}}", "title: x\n".repeat(n / 9)))),
        ("long blank run", Box::new(|n| format!("{{\"title\": ls{}x}}", " ".repeat(n)))),
        ("blank lines", Box::new(|n| format!("{{\"title\": hello{}x}}", "\n".repeat(n)))),
        ("comments at a value", Box::new(|n| format!("{{\"title\": {}ls}}", "/* c */ ".repeat(n / 8)))),
        ("weak keys in text", Box::new(|n| format!("{{\"title\": ls{}}}", "\ntitle: x".repeat(n / 9)))),
        (
            "key lines in a heredoc",
            Box::new(|n| format!("{{\"title\": cat > f <<EOF{}\nEOF}}", "\ntitle: x".repeat(n / 9))),
        ),
        ("key lines in a shell quote", Box::new(|n| format!("{{\"title\": echo 'a{}'}}", "\ntitle: x".repeat(n / 9)))),
        ("unpaired closers in text", Box::new(|n| format!("{{\"title\": {}}}", "echo } ".repeat(n / 7)))),
        (
            "`</` in a foreign value",
            Box::new(|n| format!("<parameter name=\"title\">cat {}</parameter>", "</x ".repeat(n / 4))),
        ),
        ("unclosed foreign value", Box::new(|n| format!("<parameter name=\"title\">ls{}", "</".repeat(n / 2)))),
        // Round 8: fences in a fenced value, and declared-name tags that never close.
        (
            "fences in a fenced value",
            Box::new(|n| format!("```json\n{{\"title\": {}}}\n```", "a ``` b ".repeat(n / 8))),
        ),
        ("unclosed key tags in text", Box::new(|n| format!("{{\"title\": web {}}}", "<tags>x ".repeat(n / 8)))),
        // Round 23: many strings and many edits (each string once looked through every edit).
        ("numeric strings coerced", Box::new(|n| format!("{{\"ids\": [{}\"0\"]}}", "\"12345\", ".repeat(n / 9)))),
        ("a key given many times", Box::new(|n| format!("{{{}}}", "\"title\": \"a\", ".repeat(n / 14)))),
        // Round 24: escapes inside one long word (each once re-read the word around it).
        ("line breaks inside a word", Box::new(|n| format!("{{\"title\": \"{}a\",}}", "a\\na".repeat(n / 4)))),
        (
            "unclosed parameter tags in text",
            Box::new(|n| format!("{{\"title\": web {}}}", "<parameter name=x ".repeat(n / 18))),
        ),
    ]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let schema = ToolSchema::compile(&serde_json::json!({
        "type": "object",
        "properties": {"title": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
                       "ids": {"type": "array", "items": {"type": "integer"}}},
        "additionalProperties": false
    }))
    .unwrap();
    let options = RepairOptions { max_input_bytes: 64 << 20, ..RepairOptions::default() };
    let sizes = [10_000, 100_000, 1_000_000, 10_000_000];
    println!("| input shape | 10 KB | 100 KB | 1 MB | 10 MB | outcome |");
    println!("|---|---|---|---|---|---|");
    for (name, build) in shapes() {
        let mut row = format!("| {name} |");
        let mut outcome = String::new();
        for size in sizes {
            let input = build(size);
            let rounds = (20_000_000 / size).clamp(1, 200);
            let started = Instant::now();
            for _ in 0..rounds {
                let result = repair(&input, Some(&schema), &options);
                outcome = result.reason.map_or(result.status.as_str().to_string(), |r| r.code.as_str().to_string());
            }
            let per_mb = started.elapsed().as_secs_f64() * 1000.0 / rounds as f64 / (input.len() as f64 / 1e6);
            row.push_str(&format!(" {per_mb:.2} ms/MB |"));
        }
        println!("{row} {outcome} |");
    }
}
