#!/usr/bin/env bash
# The project's test command (README, .ci/run): installs the pinned end-to-end parts the tests
# drive (Claude Code CLI, anthropic SDK) when missing, then runs every Rust test.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f tests/e2e/setup.sh ]; then
  bash tests/e2e/setup.sh
fi
cargo test
