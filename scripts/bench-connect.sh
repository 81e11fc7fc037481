#!/usr/bin/env bash
# Gateway CPU per node connect (upgrade + connect + first facts.update),
# before and after in one run: the gateways of BEFORE (a git revision) and
# of this tree take turns on the same store of 1,000 synthetic skills
# (`skillgate-fleet skills --probe`), each round a fresh gateway and
# `skillgate-fleet nodes -n N` connecting to it; the gateway's user+system
# CPU from the start of the fleet until every node reported its facts
# and, as in `make bench`, the fleet's probe (--probe-agent main: 20 probe
# node connects, each polled to the prompt and back) finished (the
# fleet's --ready-file), divided by N; PROBE=0 leaves the probe out. The
# order alternates per round (before, after; after, before; …) so that a
# noisy neighbour weighs on both alike. Without BEFORE only this tree's
# gateway runs.
#   BEFORE=REV [ROUNDS=5] [N=10000] [RATE=2000/s] [PROBE=0] [PROFILE=1] bash scripts/bench-connect.sh
# PROFILE=1 also records a CPU profile of this tree's gateway in the last
# round with `perf record` (if installed): bench-results/connect-perf.txt.
# Raw results go to bench-results/connect-*, a summary to stdout. Loopback
# only; port PORT (7799).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-results
mkdir -p "$out"
rm -f "$out"/connect-*
work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-bench-connect.XXXXXX")"
port=${PORT:-7799}
base=http://127.0.0.1:$port
rounds=${ROUNDS:-5}
n=${N:-10000}
rate=${RATE:-2000/s}
cleanup() {
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

{
  echo "date:    $(date -u +%FT%TZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "go:      $(go version)"
  echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${BEFORE:+, before: $(git rev-parse --short "$BEFORE")}"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
} | tee "$out/connect-machine.txt"

mkdir -p "$work/after" "$work/before"
go build -o "$work/after/" ./cmd/skillgate ./cmd/skillgate-fleet
labels=(after)
if [ -n "${BEFORE:-}" ]; then
  mkdir -p "$work/before-src"
  git archive "$BEFORE" | tar -x -C "$work/before-src"
  (cd "$work/before-src" && go build -o "$work/before/" ./cmd/skillgate)
  labels=(before after)
fi
fleet="$work/after/skillgate-fleet"
"$fleet" skills --out "$work/store" -n 1000 --probe >/dev/null

# one LABEL ROUND: a fresh gateway of LABEL and N nodes; appends
# "label round cpu_ms seconds" to connect-rounds.txt.
one() {
  local label=$1 round=$2
  "$work/$label/skillgate" serve --store "$work/store" --listen "127.0.0.1:$port" 2>"$work/gateway.log" &
  local gw=$!
  for _ in $(seq 200); do curl -fsS -o /dev/null "$base/readyz" 2>/dev/null && break; sleep 0.05; done
  curl -fsS -o /dev/null "$base/readyz" || { echo "gateway $label did not start:"; tail "$work/gateway.log"; exit 1; }
  local hz; hz=$(getconf CLK_TCK)
  cpu() { awk -v hz="$hz" '{printf "%d\n", ($14+$15)*1000/hz}' "/proc/$gw/stat"; }
  local perf=""
  if [ "${PROFILE:-}" = 1 ] && [ "$label" = after ] && [ "$round" = "$rounds" ] && command -v perf >/dev/null; then
    perf record -F 999 -g -o "$out/connect-perf.data" -p "$gw" 2>/dev/null &
    perf=$!
    sleep 0.5
  fi
  rm -f "$work/ready"
  local c0; c0=$(cpu)
  local probe=(--probe-agent main)
  [ "${PROBE:-1}" = 0 ] && probe=()
  "$fleet" nodes --gateway "$base" -n "$n" --connect-rate "$rate" "${probe[@]}" --ready-file "$work/ready" --json >"$work/fleet.json" 2>"$work/fleet.log" &
  local fl=$!
  for _ in $(seq 3000); do [ -f "$work/ready" ] && break; sleep 0.02; done
  [ -f "$work/ready" ] || { echo "fleet did not come up:"; tail "$work/fleet.log"; exit 1; }
  local c1; c1=$(cpu)
  if [ -n "$perf" ]; then
    kill -INT "$perf"; wait "$perf" || true
    perf report -i "$out/connect-perf.data" --no-children --sort symbol --stdio 2>/dev/null | grep -v '^$' | head -150 >"$out/connect-perf.txt" || true
    perf report -i "$out/connect-perf.data" --children --sort symbol --stdio -g none 2>/dev/null | grep -v '^$' | head -150 >"$out/connect-perf-children.txt" || true
  fi
  kill -INT "$fl"; wait "$fl" || true
  local secs; secs=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["allConnectedSeconds"])' "$work/fleet.json" 2>/dev/null || echo "?")
  kill "$gw"; wait "$gw" || true
  echo "$label $round $((c1 - c0)) $secs" | tee -a "$out/connect-rounds.txt"
}

echo; echo "== $rounds rounds of $n nodes at --connect-rate $rate$([ "${PROBE:-1}" = 0 ] || echo ", --probe-agent main") (label round gateway-cpu-ms seconds-to-all-reported)"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order=("${labels[@]}"); else order=(); for ((i = ${#labels[@]} - 1; i >= 0; i--)); do order+=("${labels[$i]}"); done; fi
  for l in "${order[@]}"; do one "$l" "$r"; done
done

echo; echo "== summary (median and range over the rounds)"
python3 - "$out/connect-rounds.txt" "$n" <<'PY' | tee "$out/connect-summary.txt"
import statistics, sys
n = int(sys.argv[2]); rows = {}
for line in open(sys.argv[1]):
    label, _, cpu, secs = line.split()
    rows.setdefault(label, []).append((int(cpu) / n, float(secs) if secs != "?" else float("nan")))
for label in ("before", "after"):
    if label not in rows: continue
    cpu = [c for c, _ in rows[label]]; secs = [s for _, s in rows[label]]
    print(f"{label:6s}: gateway CPU per connect median {statistics.median(cpu):.3f} ms (range {min(cpu):.3f}–{max(cpu):.3f}); "
          f"all {n} reported in median {statistics.median(secs):.1f} s ({len(cpu)} rounds)")
PY
