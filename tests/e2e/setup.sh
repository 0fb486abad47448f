#!/usr/bin/env bash
# Installs the pinned real parts the end-to-end tests drive, once:
# - the Claude Code CLI and the MCP SDK (npm, tests/e2e/node_modules)
# - the anthropic and claude-agent-sdk Python packages (a venv in tests/e2e/.venv)
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x node_modules/@anthropic-ai/claude-code-linux-x64/claude ] || [ ! -d node_modules/@modelcontextprotocol/sdk ]; then
  npm install --no-audit --no-fund --loglevel=error
fi
if [ -f requirements.txt ]; then
  if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import anthropic, claude_agent_sdk" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  fi
fi
