#!/usr/bin/env bash
# toolmend side by side with Python json_repair and JS jsonrepair, in one run. Installs the
# peers (pinned) into a throwaway folder under target/, builds toolmend in release mode, and
# prints the tables that BENCHMARKS.md quotes. Run from anywhere: bash benches/compare/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/target/compare"
mkdir -p "$work/node"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check json-repair==0.64.6 jsonschema==4.26.0
fi
if [ ! -d "$work/node/node_modules/jsonrepair" ]; then
  (cd "$work/node" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error jsonrepair@3.15.0)
fi
cp "$root/benches/compare/peer_jsonrepair.mjs" "$work/node/"
(cd "$root" && cargo build --release --quiet)
"$work/venv/bin/python" "$root/benches/compare/compare.py" \
  "$root/fixtures/corpus/toolcalls.jsonl" "$root/target/release/toolmend" "$work/venv/bin/python" "$work/node" "$work"
