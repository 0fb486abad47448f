#!/usr/bin/env bash
# Installs the pinned real parts the end-to-end tests drive, once:
# - the Claude Code CLI and the MCP SDK (npm, tests/e2e/node_modules)
# - the anthropic, claude-agent-sdk, selenium and opentelemetry-proto Python packages (a venv
#   in tests/e2e/.venv)
# - Debian's chromium and chromium-driver for the live page's browser test (apt)
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x node_modules/@anthropic-ai/claude-code-linux-x64/claude ] || [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
  npm install --no-audit --no-fund --loglevel=error
fi
if [ -f requirements.txt ]; then
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import anthropic, claude_agent_sdk, selenium, opentelemetry.proto" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  fi
fi
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  # Without root or sudo this warns; the browser test then fails in CI (CI=true) and skips elsewhere.
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null; } \
    || { echo "setup.sh: could not install chromium and chromium-driver" >&2; [ "${CI:-}" != true ]; }
fi
