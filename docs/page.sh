#!/usr/bin/env bash
# Regenerates docs/page.png, the README's picture of the live page: the browser test
# (tests/page.rs) drives calls through a sidecar and saves what chromium shows.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/e2e/setup.sh
TOOLMEND_PAGE_SCREENSHOT="$PWD/docs/page.png" cargo test --test page a_real_browser_shows_calls_spans_and_updates_without_a_reload -- --exact --nocapture >/dev/null
echo "wrote docs/page.png"
