#!/usr/bin/env bash
# CPU time and context switches per request of the sidecar (and of nginx, the anchor proxy),
# read from /proc over one `cargo bench --bench latency` part. The bench's own processes share
# the machine, so compare builds by running this for each in turn, on the same machine state.
# Run: bash benches/cpu.sh [STREAMS] [REQUEST]   (TOOLMEND_BIN=path measures another build)
set -euo pipefail
streams="${1:-1}" request="${2:-realistic}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
(LATENCY_REQUEST="$request" LATENCY_STREAMS="$streams" LATENCY_SCALE="${LATENCY_SCALE:-2}" \
  cargo bench --bench latency >"$out" 2>&1 &)
sidecar="" nginx="" anchor=""
for _ in $(seq 1 600); do
  sidecar="$(pgrep -f ' serve --listen 127.0.0.1:' | head -1 || true)"
  nginx="$(pgrep -f 'nginx.*toolmend-bench' | head -1 || true)"
  # The anchor's own process: the bench binary started again without arguments.
  anchor="$(pgrep -fx '.*/latency-[0-9a-f]*' | head -1 || true)"
  [ -n "$sidecar" ] && break
  sleep 0.2
done
[ -n "$sidecar" ] || { echo "the bench did not start a sidecar" >&2; cat "$out" >&2; exit 1; }
ticks() { awk '{print $14, $15}' "/proc/$1/stat" 2>/dev/null; }
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s}'; }
last_sidecar="" last_nginx="" last_anchor="" last_switches=""
while kill -0 "$sidecar" 2>/dev/null; do
  last_sidecar="$(ticks "$sidecar" || echo "$last_sidecar")"
  last_switches="$(switches "$sidecar" || echo "$last_switches")"
  [ -n "$nginx" ] && last_nginx="$(ticks "$nginx" || echo "$last_nginx")"
  [ -n "$anchor" ] && last_anchor="$(ticks "$anchor" || echo "$last_anchor")"
  sleep 0.1
done
sleep 1
requests="$(grep -E "^\| $request \| $streams \|" "$out" | awk -F'|' '{gsub(/ /, "", $4); print $4}')"
[ -n "$requests" ] || { echo "no result row in the bench output" >&2; cat "$out" >&2; exit 1; }
# Warm-up requests (32 per target) are counted too.
total=$((requests + 32))
hz="$(getconf CLK_TCK)"
per_request() { awk -v t="$1" -v n="$total" -v hz="$hz" 'BEGIN {printf "%.3f", t * 1000 / hz / n}'; }
read -r user sys <<<"$last_sidecar"
echo "toolmend: user $(per_request "$user") ms, system $(per_request "$sys") ms per request; $((last_switches / total)) context switches per request"
if [ -n "$last_nginx" ]; then
  read -r user sys <<<"$last_nginx"
  echo "nginx:    user $(per_request "$user") ms, system $(per_request "$sys") ms per request"
fi
if [ -n "$last_anchor" ]; then
  read -r user sys <<<"$last_anchor"
  echo "anchor:   user $(per_request "$user") ms, system $(per_request "$sys") ms per request (its own process)"
fi
grep -E "^\| $request \| $streams \|" "$out"
