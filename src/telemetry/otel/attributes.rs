//! An event's JSON fields as OTLP attribute values: objects as maps, arrays as lists, numbers
//! as integers where they fit. A null (a redacted input, an absent reason) is left out.

use opentelemetry::logs::AnyValue;
use opentelemetry::Key;
use serde_json::Value;

pub(super) fn any_value(value: &Value) -> Option<AnyValue> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => AnyValue::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => AnyValue::Int(i),
            None => AnyValue::Double(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => AnyValue::String(s.clone().into()),
        // Nulls in a list keep their place (as the text `null`) so indices still match.
        Value::Array(items) => AnyValue::ListAny(Box::new(
            items.iter().map(|item| any_value(item).unwrap_or_else(|| AnyValue::String("null".into()))).collect(),
        )),
        Value::Object(map) => AnyValue::Map(Box::new(
            map.iter().filter_map(|(k, v)| Some((Key::new(k.clone()), any_value(v)?))).collect(),
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_becomes_attribute_values() {
        assert_eq!(any_value(&json!(null)), None);
        assert_eq!(any_value(&json!(3)), Some(AnyValue::Int(3)));
        assert_eq!(any_value(&json!(1.5)), Some(AnyValue::Double(1.5)));
        let Some(AnyValue::ListAny(edits)) = any_value(&json!([{"kind": "bare_list", "span": [14, 45], "x": null}]))
        else {
            panic!("a list");
        };
        let AnyValue::Map(edit) = &edits[0] else { panic!("a map") };
        assert_eq!(edit[&Key::new("kind")], AnyValue::String("bare_list".into()));
        assert_eq!(edit[&Key::new("span")], AnyValue::ListAny(Box::new(vec![AnyValue::Int(14), AnyValue::Int(45)])));
        assert!(!edit.contains_key(&Key::new("x")));
    }
}
