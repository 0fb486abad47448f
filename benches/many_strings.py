#!/usr/bin/env python3
"""Records with many strings and many edits (attack round 23's quadratic shape), at doubling
sizes: `python3 benches/many_strings.py DIR` writes DIR/arrN.jsonl and DIR/dupN.jsonl; time
each with `toolmend repair FILE` (BENCHMARKS.md, "After round 23's finding")."""
import json
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "."
integers = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}, "required": ["a"]}
integer = {"type": "object", "properties": {"a": {"type": "integer"}}}
for n in (25_000, 50_000, 100_000, 200_000):
    # Valid JSON whose every item is a numeric string: one lossless coercion per item.
    raw = '{"a":[' + ",".join('"%d"' % i for i in range(n)) + "]}"
    with open(f"{out}/arr{n}.jsonl", "w") as f:
        f.write(json.dumps({"id": f"arr{n}", "tool": "t", "schema": integers, "raw": raw, "stop_reason": "tool_use"}) + "\n")
    # One key given again and again, its value a numeric string.
    raw = "{" + ",".join('"a":"1"' for _ in range(n // 3)) + "}"
    with open(f"{out}/dup{n}.jsonl", "w") as f:
        f.write(json.dumps({"id": f"dup{n}", "tool": "t", "schema": integer, "raw": raw, "stop_reason": "tool_use"}) + "\n")
