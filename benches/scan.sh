#!/usr/bin/env bash
# `toolmend scan` over 10,000 transcript files, generated (not committed) under target/ from the
# fixture sessions, one in 50 the real recorded transcript. Prints time and peak memory.
# Run: bash benches/scan.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/target/scan-bench"
if [ ! -f "$dir/.complete" ]; then
  rm -rf "$dir"
  python3 - "$root" "$dir" <<'PY'
import os, sys
root, out = sys.argv[1], sys.argv[2]
sources = [os.path.join(root, "fixtures/transcripts/projects/-home-dev-app", name) for name in (
    "aaaaaaaa-0000-4000-8000-000000000001.jsonl",
    "bbbbbbbb-0000-4000-8000-000000000002.jsonl",
    "cccccccc-0000-4000-8000-000000000003.jsonl")]
texts = [open(p, encoding="utf-8").read() for p in sources]
real = open(os.path.join(root, "fixtures/transcripts/real-cli-2.1.332.jsonl"), encoding="utf-8").read()
ids = ["aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002",
       "cccccccc-0000-4000-8000-000000000003"]
for n in range(10000):
    folder = os.path.join(out, "-home-dev-project-%03d" % (n % 100))
    os.makedirs(folder, exist_ok=True)
    session = "%08x-0000-4000-8000-%012x" % (n, n)
    if n % 50 == 0:
        text = real.replace("3f94dac8-58b5-42a2-a45d-ca15d250a8cf", session)
    else:
        text = texts[n % 3].replace(ids[n % 3], session)
    with open(os.path.join(folder, session + ".jsonl"), "w", encoding="utf-8") as f:
        f.write(text)
PY
  touch "$dir/.complete"
fi
(cd "$root" && cargo build --release --quiet)
echo "$(find "$dir" -name '*.jsonl' | wc -l) files, $(du -sh "$dir" | cut -f1)"
/usr/bin/time -f "toolmend scan: %e s elapsed, %M KiB peak resident" \
  "$root/target/release/toolmend" scan "$dir" --json > "$root/target/scan-bench.json"
python3 -c "
import json; r = json.load(open('$root/target/scan-bench.json'))
print('files %d, problems %d; ' % (r['files'], len(r['problems'])) + ', '.join('%s: %d calls, %d unparsed, %d repairable' % (t, s['calls'], s['unparsed'], s['repairable']) for t, s in r['tools'].items()))"
