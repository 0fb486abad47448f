//! A realistic Claude Code request, generated (deterministically) instead of committed: the
//! CLI's 24 tool definitions with schemas shaped like the real ones (~62 KB), a long system
//! prompt, and a session's history of text, tool calls and file-sized tool results grown to
//! the wanted size. Members come in the CLI's order: `tools` after `messages`.

use serde_json::{json, Map, Value};

/// A small deterministic generator of English-like technical prose and code.
struct Words(u64);

const WORDS: &[&str] = &[
    "the",
    "tool",
    "file",
    "path",
    "returns",
    "when",
    "command",
    "output",
    "use",
    "this",
    "for",
    "search",
    "pattern",
    "directory",
    "absolute",
    "must",
    "not",
    "a",
    "an",
    "of",
    "to",
    "in",
    "and",
    "with",
    "results",
    "line",
    "numbers",
    "content",
    "user",
    "agent",
    "task",
    "parallel",
    "multiple",
    "calls",
    "instead",
    "prefer",
    "only",
    "never",
    "always",
    "shell",
    "session",
    "timeout",
    "milliseconds",
    "background",
    "matches",
    "glob",
    "regex",
    "edit",
    "string",
    "replace",
    "unique",
    "context",
    "model",
    "request",
    "response",
    "schema",
    "optional",
    "required",
    "provided",
    "default",
    "limit",
    "offset",
    "large",
    "files",
    "read",
    "write",
    "create",
    "existing",
];

const CODE: &[&str] = &[
    "let",
    "fn",
    "match",
    "Some(value)",
    "None",
    "=>",
    "self.state",
    "return",
    "Ok(())",
    "Err(error)",
    "&mut",
    "config",
    "request",
    "response.status()",
    "if",
    "else",
    "for item in",
    "items.iter()",
    ".map(|x|",
    "x + 1)",
    "// keep the order",
    "async",
    ".await?;",
    "String::new()",
    "Vec::with_capacity(16)",
    "impl",
    "pub struct",
];

impl Words {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A length in `min..min + spread`.
    fn length(&mut self, min: usize, spread: usize) -> usize {
        min + self.next() as usize % spread
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next() as usize % from.len()]
    }

    /// Sentences of prose, about `bytes` long.
    fn prose(&mut self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes + 16);
        while out.len() < bytes {
            let length = 6 + self.next() as usize % 14;
            for i in 0..length {
                let word = self.pick(WORDS);
                if i == 0 {
                    out.extend(word[..1].to_uppercase().chars().chain(word[1..].chars()));
                } else {
                    out.push(' ');
                    out.push_str(word);
                }
            }
            out.push_str(if self.next() % 5 == 0 { ".\n\n" } else { ". " });
        }
        out
    }

    /// A source file as the Read tool returns it: numbered lines.
    fn file(&mut self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes + 64);
        let mut line = 1;
        while out.len() < bytes {
            let indent = 4 * (self.next() as usize % 4);
            let mut text = String::new();
            for _ in 0..(2 + self.next() % 8) {
                text.push_str(self.pick(CODE));
                text.push(' ');
            }
            out.push_str(&format!("{line:>6}\u{2192}{:indent$}{}\n", "", text.trim_end()));
            line += 1;
        }
        out
    }
}

fn property(kind: &str, description: String) -> Value {
    json!({"type": kind, "description": description})
}

/// One tool as the CLI declares it: a long description and a draft-07 object schema.
fn tool(words: &mut Words, name: &str, properties: &[(&str, &str)], required: &[&str], description: usize) -> Value {
    let mut props = Map::new();
    for (key, kind) in properties {
        let schema = match *kind {
            "array" => json!({"type": "array", "items": {"type": "object", "properties": {
                "content": {"type": "string", "minLength": 1},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                "activeForm": {"type": "string", "minLength": 1}},
                "required": ["content", "status", "activeForm"], "additionalProperties": false},
                "description": words.prose(120)}),
            "enum" => json!({"type": "string", "enum": ["content", "files_with_matches", "count"],
                "description": words.prose(160)}),
            kind => property(kind, {
                let length = words.length(90, 200);
                words.prose(length)
            }),
        };
        props.insert(key.to_string(), schema);
    }
    json!({"name": name, "description": words.prose(description), "input_schema": {
        "type": "object", "properties": props, "required": required, "additionalProperties": false,
        "$schema": "http://json-schema.org/draft-07/schema#"}})
}

const SEED: u64 = 0x5eed_0fc1_a0de;

/// A tool: name, properties (name, type), required names, description length.
type ToolSpec = (&'static str, &'static [(&'static str, &'static str)], &'static [&'static str], usize);

const S: &str = "string";

fn tools(words: &mut Words) -> Vec<Value> {
    let specs: &[ToolSpec] = &[
        (
            "Task",
            &[("description", S), ("prompt", S), ("subagent_type", S)],
            &["description", "prompt", "subagent_type"],
            6200,
        ),
        (
            "Bash",
            &[
                ("command", S),
                ("timeout", "number"),
                ("description", S),
                ("run_in_background", "boolean"),
                ("dangerouslyDisableSandbox", "boolean"),
            ],
            &["command"],
            9800,
        ),
        ("Glob", &[("pattern", S), ("path", S)], &["pattern"], 700),
        (
            "Grep",
            &[
                ("pattern", S),
                ("path", S),
                ("glob", S),
                ("output_mode", "enum"),
                ("-B", "number"),
                ("-A", "number"),
                ("-C", "number"),
                ("-n", "boolean"),
                ("-i", "boolean"),
                ("type", S),
                ("head_limit", "number"),
                ("multiline", "boolean"),
            ],
            &["pattern"],
            1500,
        ),
        ("ExitPlanMode", &[("plan", S)], &["plan"], 1200),
        ("Read", &[("file_path", S), ("offset", "number"), ("limit", "number")], &["file_path"], 1900),
        (
            "Edit",
            &[("file_path", S), ("old_string", S), ("new_string", S), ("replace_all", "boolean")],
            &["file_path", "old_string", "new_string"],
            1300,
        ),
        ("Write", &[("file_path", S), ("content", S)], &["file_path", "content"], 900),
        (
            "NotebookEdit",
            &[("notebook_path", S), ("cell_id", S), ("new_source", S), ("cell_type", S), ("edit_mode", S)],
            &["notebook_path", "new_source"],
            700,
        ),
        ("WebFetch", &[("url", S), ("prompt", S)], &["url", "prompt"], 1300),
        ("TodoWrite", &[("todos", "array")], &["todos"], 8600),
        ("WebSearch", &[("query", S), ("allowed_domains", S), ("blocked_domains", S)], &["query"], 900),
        ("BashOutput", &[("bash_id", S), ("filter", S)], &["bash_id"], 500),
        ("KillShell", &[("shell_id", S)], &["shell_id"], 300),
        ("SlashCommand", &[("command", S)], &["command"], 1500),
        ("Skill", &[("command", S)], &["command"], 1800),
        ("AskUserQuestion", &[("questions", S), ("answers", S)], &["questions"], 1400),
        ("ListMcpResourcesTool", &[("server", S)], &[], 300),
        ("ReadMcpResourceTool", &[("server", S), ("uri", S)], &["server", "uri"], 300),
        (
            "mcp__search__search",
            &[("jurisdiction", S), ("terms", S), ("limit", "integer")],
            &["jurisdiction", "terms"],
            400,
        ),
        (
            "mcp__github__create_issue",
            &[("owner", S), ("repo", S), ("title", S), ("body", S), ("labels", S)],
            &["owner", "repo", "title"],
            300,
        ),
        ("mcp__github__search_code", &[("q", S), ("per_page", "integer"), ("page", "integer")], &["q"], 400),
        ("mcp__playwright__browser_navigate", &[("url", S)], &["url"], 200),
        (
            "mcp__playwright__browser_click",
            &[("element", S), ("ref", S), ("doubleClick", "boolean"), ("button", S)],
            &["element", "ref"],
            300,
        ),
    ];
    specs.iter().map(|(name, props, required, description)| tool(words, name, props, required, *description)).collect()
}

/// One turn of a session: the user asks, the assistant reads a file, the file comes back.
fn turn(words: &mut Words, n: usize) -> [Value; 3] {
    let id = format!("toolu_01{n:020}");
    let path = format!("/home/dev/project/src/module_{}/file_{n}.rs", n % 7);
    let (ask, answer, file) = (words.length(200, 600), words.length(150, 400), words.length(2000, 9000));
    [
        json!({"role": "user", "content": [{"type": "text", "text": words.prose(ask)}]}),
        json!({"role": "assistant", "content": [
            {"type": "text", "text": words.prose(answer)},
            {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
            "content": words.file(file)}]}),
    ]
}

/// The request body, about `target_bytes` long (the history grows to fit).
pub fn request(target_bytes: usize) -> String {
    let mut words = Words(SEED);
    let tools = tools(&mut words);
    let system = json!([
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
        {"type": "text", "text": words.prose(14_000), "cache_control": {"type": "ephemeral"}},
    ]);
    let fixed = json!({"tools": tools, "system": system}).to_string().len() + 300;
    let mut messages = Vec::new();
    let mut size = fixed;
    let mut n = 0;
    while size < target_bytes {
        for message in turn(&mut words, n) {
            size += message.to_string().len() + 1;
            messages.push(message);
        }
        n += 1;
    }
    messages.push(json!({"role": "user", "content": [{"type": "text", "text": "Now run the tests."}]}));
    json!({
        "model": "claude-sonnet-4-5-20250929",
        "messages": messages,
        "system": system,
        "tools": tools,
        "metadata": {"user_id": "user_0123456789abcdef_account__session_00000000-0000-0000-0000-000000000000"},
        "max_tokens": 32000,
        "stream": true,
    })
    .to_string()
}

/// The size of the `tools` array in `request`'s output.
pub fn tools_bytes() -> usize {
    json!(tools(&mut Words(SEED))).to_string().len()
}
