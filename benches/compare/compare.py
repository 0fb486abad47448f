"""toolmend, Python json_repair and JS jsonrepair side by side, measured in one run.

1. The tool-call corpus: right / wrong / missed per system against each case's accepted
   outcomes. A peer's output counts as repaired only if it validates against the tool's schema.
2. The corpus repeated to about 50 MB: whole-process time and peak memory per system.

Usage (benches/compare/run.sh sets it up): compare.py CORPUS TOOLMEND PYTHON NODE_DIR WORKDIR"""
import json
import os
import resource
import subprocess
import sys
import time

import jsonschema

CORPUS, TOOLMEND, PYTHON, NODE_DIR, WORK = sys.argv[1:6]
HERE = os.path.dirname(os.path.abspath(__file__))
cases = [json.loads(line) for line in open(CORPUS, encoding="utf-8")]


def commands(path):
    return {
        "toolmend": [TOOLMEND, "repair", path],
        "json_repair (Python)": [PYTHON, os.path.join(HERE, "peer_json_repair.py"), path],
        "jsonrepair (JS)": ["node", os.path.join(NODE_DIR, "peer_jsonrepair.mjs"), path],
    }


def measured(command):
    """Runs command in a wrapper process so its peak memory is its own."""
    wrapper = ("import resource, subprocess, sys, time\n"
               "t = time.perf_counter()\n"
               "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
               "sys.stderr.write('%f %d\\n' % (time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
               "sys.stdout.buffer.write(p.stdout)\n")
    run = subprocess.run([sys.executable, "-c", wrapper, *command], capture_output=True, check=True)
    seconds, kib = run.stderr.decode().split()
    return run.stdout.decode(), float(seconds), int(kib)


def outcome_of(line, schema):
    out = json.loads(line)
    if out["status"] == "repaired" and not jsonschema.Draft202012Validator(schema).is_valid(out.get("input")):
        return {"status": "refused"}
    return out


def grade(out, accept):
    for accepted in accept:
        if accepted["status"] == out["status"] and (out["status"] == "refused" or accepted.get("input") == out.get("input")):
            return "right"
    return "missed" if out["status"] == "refused" else "wrong"


print("## The tool-call corpus (%d cases)\n" % len(cases))
print("| system | right | wrong | missed |")
print("|---|---|---|---|")
wrong_cases = {}
for name, command in commands(CORPUS).items():
    stdout, _, _ = measured(command)
    lines = [line for line in stdout.splitlines() if line.strip()]
    grades = {"right": 0, "wrong": 0, "missed": 0}
    for case, line in zip(cases, lines):
        graded = grade(outcome_of(line, case["schema"]), case["accept"])
        grades[graded] += 1
        if graded == "wrong":
            wrong_cases.setdefault(name, []).append(case["id"])
    print("| %s | %d | %d | %d |" % (name, grades["right"], grades["wrong"], grades["missed"]))
for name, ids in wrong_cases.items():
    print("\n%s wrong on: %s" % (name, ", ".join(ids)))

scaled = os.path.join(WORK, "scaled.jsonl")
with open(CORPUS, encoding="utf-8") as f:
    block = f.read()
repeats = max(1, (50 << 20) // len(block))
with open(scaled, "w", encoding="utf-8") as f:
    for _ in range(repeats):
        f.write(block)
size_mb = os.path.getsize(scaled) / (1 << 20)
print("\n## The corpus repeated to %.0f MB (%d calls)\n" % (size_mb, repeats * len(cases)))
print("| system | time (s) | peak memory (MiB) | time vs toolmend | memory vs toolmend |")
print("|---|---|---|---|---|")
results = {name: measured(command)[1:] for name, command in commands(scaled).items()}
base_time, base_mem = results["toolmend"]
for name, (seconds, kib) in results.items():
    print("| %s | %.2f | %.0f | %.1fx | %.1fx |" % (name, seconds, kib / 1024, seconds / base_time, kib / base_mem))
