"""Python json_repair over JSON Lines records {schema, raw}: one line out per record,
{"status": "valid" | "repaired" | "refused", "input": ...}, using its schema mode, and counting
a repair only if it validates against the schema (as toolmend's must)."""
import json
import sys

import jsonschema
from json_repair import repair_json

validators = {}
for line in open(sys.argv[1], encoding="utf-8"):
    record = json.loads(line)
    raw, schema = record["raw"], record.get("schema")
    key = json.dumps(schema, sort_keys=True)
    if key not in validators:
        validators[key] = jsonschema.Draft202012Validator(schema) if schema else None
    validator = validators[key]
    try:
        out = {"status": "valid", "input": json.loads(raw)}
    except ValueError:
        try:
            value = repair_json(raw, return_objects=True, schema=schema) if schema else repair_json(raw, return_objects=True)
            ok = isinstance(value, dict) and (validator is None or validator.is_valid(value))
            out = {"status": "repaired", "input": value} if ok else {"status": "refused"}
        except Exception:
            out = {"status": "refused"}
    sys.stdout.write(json.dumps(out) + "\n")
