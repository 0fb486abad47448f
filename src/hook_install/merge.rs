//! Adding and removing toolmend's PostToolBatch entry in the text of a Claude Code settings
//! file, every other key and hook kept in its order.

use serde_json::{json, Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("expected {expected} at '{pointer}'")]
    Shape { pointer: &'static str, expected: &'static str },
}

/// The settings with `command` installed as a PostToolBatch hook, replacing toolmend's own
/// earlier entries; `None` when exactly that command is already the only one installed.
/// `settings` is the file's text, `None` for a file that does not exist.
pub fn with_hook(settings: Option<&str>, command: &str) -> Result<Option<String>, SettingsError> {
    let mut root = parse(settings.unwrap_or(""))?;
    let installed = batch_hooks(&root)?.map_or(Vec::new(), |entries| our_commands(entries));
    if installed == [command] {
        return Ok(None);
    }
    remove_ours(&mut root)?;
    let hooks = object_at(&mut root, "hooks", "/hooks")?;
    let entries = hooks
        .entry("PostToolBatch")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or(SettingsError::Shape { pointer: "/hooks/PostToolBatch", expected: "an array" })?;
    entries.push(json!({"hooks": [{"type": "command", "command": command}]}));
    Ok(Some(render(&root)))
}

/// The settings without toolmend's PostToolBatch hooks; `None` when there was none.
pub fn without_hook(settings: &str) -> Result<Option<String>, SettingsError> {
    let mut root = parse(settings)?;
    Ok(remove_ours(&mut root)?.then(|| render(&root)))
}

/// A hook command toolmend installed: its program is `toolmend` and it runs the batch hook.
pub fn is_ours(command: &str) -> bool {
    let command = command.trim_start();
    let program = match command.strip_prefix('\'') {
        Some(quoted) => quoted.split('\'').next().unwrap_or_default(),
        None => command.split_whitespace().next().unwrap_or_default(),
    };
    let name = program.rsplit('/').next().unwrap_or_default();
    name == "toolmend" && command.contains(" hook post-tool-batch")
}

fn parse(text: &str) -> Result<Value, SettingsError> {
    // An empty file (`touch settings.json`) holds no settings yet.
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let root: Value = serde_json::from_str(text).map_err(|e| SettingsError::Json(e.to_string()))?;
    if !root.is_object() {
        return Err(SettingsError::Shape { pointer: "", expected: "an object" });
    }
    batch_hooks(&root)?;
    Ok(root)
}

/// The PostToolBatch entries, checking every level on the way has the type Claude Code reads.
fn batch_hooks(root: &Value) -> Result<Option<&Vec<Value>>, SettingsError> {
    let Some(hooks) = root.get("hooks") else { return Ok(None) };
    let hooks = hooks.as_object().ok_or(SettingsError::Shape { pointer: "/hooks", expected: "an object" })?;
    match hooks.get("PostToolBatch") {
        None => Ok(None),
        Some(Value::Array(entries)) => Ok(Some(entries)),
        Some(_) => Err(SettingsError::Shape { pointer: "/hooks/PostToolBatch", expected: "an array" }),
    }
}

fn our_commands(entries: &[Value]) -> Vec<&str> {
    entries
        .iter()
        .flat_map(|entry| entry["hooks"].as_array().into_iter().flatten())
        .filter_map(|hook| hook["command"].as_str())
        .filter(|command| is_ours(command))
        .collect()
}

/// Removes toolmend's hook commands, then whatever that left empty. True if one was removed.
fn remove_ours(root: &mut Value) -> Result<bool, SettingsError> {
    let Some(entries) = root.pointer_mut("/hooks/PostToolBatch").and_then(Value::as_array_mut) else {
        return Ok(false);
    };
    let mut removed = false;
    entries.retain_mut(|entry| {
        let Some(hooks) = entry.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
        let before = hooks.len();
        hooks.retain(|hook| !hook["command"].as_str().is_some_and(is_ours));
        removed |= hooks.len() < before;
        !(hooks.is_empty() && before > 0)
    });
    if removed && entries.is_empty() {
        let hooks = object_at(root, "hooks", "/hooks")?;
        hooks.remove("PostToolBatch");
        if hooks.is_empty() {
            root.as_object_mut().expect("parse checked the root").remove("hooks");
        }
    }
    Ok(removed)
}

fn object_at<'a>(
    value: &'a mut Value,
    key: &str,
    pointer: &'static str,
) -> Result<&'a mut Map<String, Value>, SettingsError> {
    let object = value.as_object_mut().ok_or(SettingsError::Shape { pointer: "", expected: "an object" })?;
    object
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or(SettingsError::Shape { pointer, expected: "an object" })
}

/// Two-space indentation and a final newline, as Claude Code writes the file.
fn render(root: &Value) -> String {
    let mut text = serde_json::to_string_pretty(root).expect("a Value always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "toolmend hook post-tool-batch --report http://127.0.0.1:8787";

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn adds_one_entry_and_keeps_everything_else_in_order() {
        let before = r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
            "PostToolBatch": [{"hooks": [{"type": "command", "command": "log-batch"}]}]}, "env": {"A": "1"}}"#;
        let after = with_hook(Some(before), OURS).unwrap().unwrap();
        let mut expected = value(before);
        expected["hooks"]["PostToolBatch"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks": [{"type": "command", "command": OURS}]}));
        assert_eq!(after, render(&expected));
        assert!(after.find("\"model\"").unwrap() < after.find("\"hooks\"").unwrap());
        assert!(after.find("\"Stop\"").unwrap() < after.find("\"PostToolBatch\"").unwrap());
    }

    #[test]
    fn installing_twice_leaves_one_entry_and_a_new_report_url_replaces_it() {
        let once = with_hook(None, OURS).unwrap().unwrap();
        assert_eq!(
            value(&once),
            json!({"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": OURS}]}]}})
        );
        assert_eq!(with_hook(Some(&once), OURS).unwrap(), None);
        let other = "'/opt/my tools/toolmend' hook post-tool-batch";
        let replaced = value(&with_hook(Some(&once), other).unwrap().unwrap());
        assert_eq!(replaced["hooks"]["PostToolBatch"], json!([{"hooks": [{"type": "command", "command": other}]}]));
    }

    #[test]
    fn uninstall_removes_only_toolmends_commands() {
        let mixed = r#"{"hooks": {"PostToolBatch": [
            {"hooks": [{"type": "command", "command": "log-batch"}, {"type": "command", "command": "/bin/toolmend hook post-tool-batch"}]},
            {"hooks": [{"type": "command", "command": "toolmend hook post-tool-batch"}]}]}}"#;
        let after = value(&without_hook(mixed).unwrap().unwrap());
        assert_eq!(
            after,
            json!({"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": "log-batch"}]}]}})
        );
        let installed = with_hook(Some(r#"{"model": "opus"}"#), OURS).unwrap().unwrap();
        assert_eq!(value(&without_hook(&installed).unwrap().unwrap()), json!({"model": "opus"}));
        assert_eq!(without_hook(r#"{"model": "opus"}"#).unwrap(), None);
    }

    #[test]
    fn malformed_settings_are_errors() {
        let cases: [(&str, &str); 4] = [
            (r#"{"hooks": {"#, "not valid JSON"),
            ("[]", "expected an object at ''"),
            (r#"{"hooks": []}"#, "expected an object at '/hooks'"),
            (r#"{"hooks": {"PostToolBatch": {}}}"#, "expected an array at '/hooks/PostToolBatch'"),
        ];
        for (text, message) in cases {
            let error = with_hook(Some(text), OURS).unwrap_err().to_string();
            assert!(error.starts_with(message), "{text}: {error}");
            assert!(without_hook(text).is_err(), "{text}");
        }
    }

    #[test]
    fn recognizes_its_own_commands_only() {
        for (command, ours) in [
            (OURS, true),
            ("/usr/local/bin/toolmend hook post-tool-batch", true),
            ("'/home/me/my bin/toolmend' hook post-tool-batch --report 'http://x'", true),
            ("tee log | toolmend hook post-tool-batch", false),
            ("toolmend serve", false),
            ("nottoolmend hook post-tool-batch", false),
        ] {
            assert_eq!(is_ours(command), ours, "{command}");
        }
    }
}
