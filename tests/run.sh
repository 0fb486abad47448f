#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs the pinned end-to-end parts the tests
# drive (Claude Code CLI, MCP SDK, anthropic and Agent SDKs) when missing, then runs every test
# and closes with one line of totals; then builds the pip wheel and runs it from a fresh venv.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/e2e/setup.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --no-fail-fast 2>&1 | tee "$log" || status=$?
# The wheel test counts as one more test; the totals line comes last.
if bash tests/wheel.sh; then echo "test result: ok. 1 passed; 0 failed (wheel)" >> "$log"; else
  status=1; echo "test result: FAILED. 0 passed; 1 failed (wheel)" >> "$log"; fi
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
