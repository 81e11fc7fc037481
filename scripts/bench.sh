#!/usr/bin/env bash
# make bench: Go benchmarks (parse, evaluate naive vs indexed, render, prompt
# build cached vs uncached, node event, rebuild, governance scan of a
# 1,000-skill bucket cold and unchanged), offline eval on a file
# (1,000 skills x 10,000 hosts) and a fleet load run (1,000 skills, 10,000
# simulated nodes over real WebSockets, prompt load with and without
# churn: closed loop, and open loop at 2,000 requests/s under churn), then
# 10,000 long polls on a fresh gateway (its RSS per waiter, and how long
# a flip of the probe skill takes to reach the last waiter), then the MCP
# tools beside the HTTP endpoints they stand for (skillgate-fleet mcp). Raw results go to bench-results/, a summary to stdout;
# BENCHMARKS.md is written from such a run. Loopback only.
# Last, scripts/bench-cluster.sh: gateway replicas over NATS JetStream (bench-results/cluster-*).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-results
rm -rf "$out"; mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-bench.XXXXXX")"
listen=127.0.0.1:7798
base=http://$listen
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM

{
  echo "date:    $(date -u +%FT%TZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "go:      $(go version)"
  echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} | tee "$out/machine.txt"

echo; echo "== go benchmarks (go test -run '^\$' -bench . -benchmem ./skill ./governance ./eligibility ./promptbuild ./gateway)"
go test -run '^$' -bench . -benchmem -benchtime 1s -timeout 20m ./skill ./governance ./eligibility ./promptbuild ./gateway | tee "$out/go-bench.txt"

ns() { awk -v n="$1" '$1 ~ n"-[0-9]+$" {print $3}' "$out/go-bench.txt"; }
echo; echo "== ratios from this run"
for s in 100 1000; do for h in 100 1000 10000; do
  naive=$(ns "BenchmarkEvaluate/naive/skills=$s/hosts=$h"); idx=$(ns "BenchmarkEvaluate/indexed/skills=$s/hosts=$h"); v=$(ns "BenchmarkEvaluate/verdict/skills=$s/hosts=$h")
  awk -v s=$s -v h=$h -v a="$naive" -v b="$idx" -v c="$v" 'BEGIN{printf "evaluate %4d skills x %5d hosts: naive %10.3f ms, indexed %8.3f ms (%5.1fx), verdicts only %7.3f ms (%6.1fx)\n", s, h, a/1e6, b/1e6, a/b, c/1e6, a/c}'
done; done | tee "$out/ratios.txt"
for h in 1000 10000; do
  c=$(ns "BenchmarkPromptBuild/cached/skills=1000/hosts=$h"); u=$(ns "BenchmarkPromptBuild/uncached/skills=1000/hosts=$h")
  awk -v h=$h -v c="$c" -v u="$u" 'BEGIN{printf "prompt build 1000 skills, %5d hosts: cached %.0f ns, uncached %.1f us (%.0fx)\n", h, c, u/1e3, u/c}'
done | tee -a "$out/ratios.txt"
cold=$(ns "BenchmarkGovernanceScan/skills=1000/cold"); same=$(ns "BenchmarkGovernanceScan/skills=1000/unchanged")
mbs=$(awk '$1 ~ /^BenchmarkScan-[0-9]+$/ {for (i = 1; i <= NF; i++) if ($i == "MB/s") print $(i-1)}' "$out/go-bench.txt")
awk -v c="$cold" -v u="$same" -v m="$mbs" 'BEGIN{printf "governance: 1000-skill bucket scanned from cold %.0f ms, unchanged %.1f ms (%.0fx); one 256 KiB file %s MB/s\n", c/1e6, u/1e6, c/u, m}' | tee -a "$out/ratios.txt"

go build -o "$work/bin/" ./cmd/skillgate ./cmd/skillgate-fleet
B="$work/bin"

# Offline eval at fleet scale, before anything else runs: the whole
# process (start, store, hosts file, evaluation, JSON output) on 1,000
# synthetic skills and the facts of 10,000 simulated hosts.
echo; echo "== eval on a file (skillgate eval --json, 1,000 skills x 10,000 hosts, median of 7 runs)"
"$B/skillgate-fleet" skills --out "$work/eval-store" -n 1000 >/dev/null
"$B/skillgate-fleet" hosts --out "$work/hosts.json" -n 10000 >/dev/null
python3 - "$B/skillgate" "$work" <<'PY' | tee "$out/eval.txt"
import os, statistics, subprocess, sys, time
exe, work = sys.argv[1], sys.argv[2]
cmd = [exe, "eval", "--store", work + "/eval-store", "--hosts", work + "/hosts.json", "--agent", "main", "--json"]
runs = []
for i in range(8):  # the first run warms the page cache and is not counted
    with open(work + "/eval.json", "wb") as f:
        t = time.perf_counter(); subprocess.run(cmd, stdout=f, check=True); runs.append(time.perf_counter() - t)
runs = runs[1:]
print(f"eval 1000 skills x 10000 hosts: median {statistics.median(runs)*1e3:.0f} ms, min {min(runs)*1e3:.0f} ms, max {max(runs)*1e3:.0f} ms "
      f"({len(runs)} runs; hosts file {os.path.getsize(work + '/hosts.json')/1e6:.1f} MB, JSON answer {os.path.getsize(work + '/eval.json')/1e6:.1f} MB)")
PY

"$B/skillgate-fleet" skills --out "$work/store" -n 1000 --probe >/dev/null

# fleet_run LABEL GATEWAY-BINARY: the fleet load run against one build of
# the gateway (the simulated fleet and the load are this tree's). The body
# is not indented: it holds here-documents.
fleet_run() {
local label=$1 gwbin=$2
echo; echo "== fleet load run ($label: gateway $("$gwbin" version 2>/dev/null | head -1))"
"$gwbin" serve --store "$work/store" --listen $listen 2>"$work/gateway.log" &
gw=$!; pids+=($gw)
for _ in $(seq 100); do curl -fsS -o /dev/null $base/readyz 2>/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/{print $2}' /proc/$gw/status; }
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{printf "%d\n", ($14+$15)*1000/hz}' /proc/$gw/stat; }
rss0=$(rss)

fleet() { # name, extra flags…
  local name=$1; shift
  rm -f "$work/ready"
  "$B/skillgate-fleet" nodes --gateway $base -n 10000 --ready-file "$work/ready" --json "$@" >"$out/$label-nodes-$name.json" 2>"$work/nodes-$name.log" &
  fl=$!; pids+=($fl)
  for _ in $(seq 1800); do [ -f "$work/ready" ] && break; sleep 0.1; done
  [ -f "$work/ready" ] || { echo "fleet $name did not come up:"; tail "$work/nodes-$name.log"; exit 1; }
}
load() { # name, load flags…
  local name=$1; shift
  "$B/skillgate-fleet" load --gateway $base --agents main --duration 15s --json "$@" >"$out/$label-load-$name.json"
  python3 - "$out/$label-load-$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); l = d["latency"]; o = d.get("openLoop")
if o is None:
    print(f"load {sys.argv[2]:22s}: {d['requests']} requests, {d['errors']} errors, {d['throughput']:.0f} req/s, "
          f"p50 {l['p50Ms']:.3f} ms, p99 {l['p99Ms']:.3f} ms, max {l['maxMs']:.3f} ms")
else:  # open loop: latency from each request's scheduled send time
    s = o["sendLag"]
    print(f"load {sys.argv[2]:22s}: {o['scheduled']} due at {o['targetRate']:.0f}/s, {d['requests']} sent ({o['achievedRate']:.0f}/s), "
          f"{o['late']} late, {o['dropped']} dropped, {d['errors']} errors, "
          f"p50 {l['p50Ms']:.3f} ms, p99 {l['p99Ms']:.3f} ms, max {l['maxMs']:.3f} ms from the schedule "
          f"(send lag p50 {s['p50Ms']:.3f} ms, p99 {s['p99Ms']:.3f} ms)")
PY
}

# The fleet runs for a fixed time and prints its summary (with the probe's
# connect-to-prompt figures) when it ends; the load runs while it is up.
cpu0=$(cpu_ms)
fleet steady --duration 95s --probe-agent main
cpu1=$(cpu_ms)
awk -v a=$cpu0 -v b=$cpu1 'BEGIN{printf "gateway CPU per node connect (upgrade + connect + first facts.update, user+system): %.3f ms (%d ms for 10,000 nodes)\n", (b-a)/10000, b-a}' | tee "$out/$label-cpu.txt"
sleep 3
rss1=$(rss)
awk -v a=$rss0 -v b=$rss1 'BEGIN{printf "gateway RSS: %d KiB idle, %d KiB with 10,000 nodes: %.1f KiB per node\n", a, b, (b-a)/10000}' | tee "$out/$label-memory.txt"
curl -fsS -o "$work/block" $base/v1/agents/main/prompt
echo "prompt block: $(wc -c <"$work/block") bytes, $(grep -c '<skill ' "$work/block") skills" | tee "$out/$label-connect.txt"
load steady-c32-plain -c 32 | tee "$out/$label-load.txt"
load steady-c32-gzip -c 32 --gzip | tee -a "$out/$label-load.txt"
load steady-c4-gzip -c 4 --gzip | tee -a "$out/$label-load.txt"
load steady-open2000-gzip --rate 2000/s -c 256 --gzip | tee -a "$out/$label-load.txt"
wait $fl || true
python3 - "$out/$label-nodes-steady.json" <<'PY' | tee -a "$out/$label-connect.txt"
import json, sys
d = json.load(open(sys.argv[1])); p = d["probe"]
print(f"10,000 nodes connected and reported in {d['allConnectedSeconds']:.1f} s ({d['errors']} errors)")
print(f"node connect -> first prompt that shows it: p50 {p['appear']['p50Ms']:.1f} ms, max {p['appear']['maxMs']:.1f} ms ({p['runs']} runs); "
      f"disconnect -> gone: p50 {p['gone']['p50Ms']:.1f} ms, max {p['gone']['maxMs']:.1f} ms")
PY

# Churn: 50 connects+disconnects a second. Closed loop, then open loop:
# 2,000 requests a second on a fixed schedule, latency counted from each
# request's scheduled time (so a stall cannot hide behind a slowed-down
# client), at most 256 in flight.
fleet churn --duration 75s --churn 50/s
load churn50-c32-gzip -c 32 --gzip | tee -a "$out/$label-load.txt"
load churn50-c4-gzip -c 4 --gzip | tee -a "$out/$label-load.txt"
load churn50-open2000-gzip --rate 2000/s -c 256 --gzip | tee -a "$out/$label-load.txt"
curl -fsS $base/metrics | grep -E '^skillgate_(prompt_builds_total|evaluation_seconds_(sum|count))' > "$out/$label-metrics.txt" || true
wait $fl || true
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"churn run: {d['churned']} nodes churned, {d['errors']} errors\")" "$out/$label-nodes-churn.json" | tee -a "$out/$label-load.txt"
kill $gw 2>/dev/null || true; wait $gw 2>/dev/null || true
}

fleet_run after "$B/skillgate"

# Long polls: a fresh gateway on the same --probe store, no simulated
# fleet. Its RSS idle (after readyz and one prompt request), then with
# 10,000 long polls (GET …/prompt?wait=2m with the block's ETag in
# If-None-Match, each on its own connection) parked during a 5 s hold;
# then the probe node flips the probe skill 5 times (appears: timed from
# its facts.update; goes: from closing its socket) and every waiter must
# get the new block. No 304 rate here: `load` sends no If-None-Match (the
# gateway's Go benchmarks measure 304s). The body is not indented: it
# holds a here-document.
longpoll_run() {
echo; echo "== long poll (10,000 waiters, 5 flips of the probe skill)"
# All 10,000 waiters come from one address without a token: one client,
# past gateway.maxLongPollsPerToken's default of 1,000.
echo '{"gateway": {"maxLongPolls": 20000, "maxLongPollsPerToken": 20000}}' >"$work/longpoll.hujson"
"$B/skillgate" serve --store "$work/store" --listen $listen --config "$work/longpoll.hujson" 2>"$work/gateway-longpoll.log" &
local gw=$! up="" lp rc=0 rss0 rss1
pids+=($gw)
for _ in $(seq 100); do curl -fsS -o /dev/null $base/readyz 2>/dev/null && { up=1; break; }; sleep 0.1; done
[ -n "$up" ] || { echo "long poll: the gateway did not get ready:"; tail "$work/gateway-longpoll.log"; exit 1; }
curl -fsS -o /dev/null $base/v1/agents/main/prompt
sleep 1
rss0=$(awk '/VmRSS/{print $2}' /proc/$gw/status)
rm -f "$work/longpoll-ready"
"$B/skillgate-fleet" longpoll --gateway $base -n 10000 --flips 5 --hold 5s --ready-file "$work/longpoll-ready" --json \
  >"$out/longpoll.json" 2>"$work/longpoll.log" &
lp=$!; pids+=($lp)
for _ in $(seq 1800); do [ -f "$work/longpoll-ready" ] && break; kill -0 $lp 2>/dev/null || break; sleep 0.1; done
[ -f "$work/longpoll-ready" ] || { echo "long poll: the 10,000 long polls never all waited:"; tail "$work/longpoll.log"; exit 1; }
sleep 2 # within the 5 s hold
rss1=$(awk '/VmRSS/{print $2}' /proc/$gw/status)
wait $lp || rc=$?
kill $gw 2>/dev/null || true; wait $gw 2>/dev/null || true
if [ $rc -ne 0 ]; then
  echo "long poll: skillgate-fleet longpoll failed (exit $rc):"; tail "$work/longpoll.log"; cat "$out/longpoll.json"; exit 1
fi
python3 - "$out/longpoll.json" "$rss0" "$rss1" <<'PY' | tee "$out/longpoll.txt"
import json, sys
d = json.load(open(sys.argv[1])); a, b = int(sys.argv[2]), int(sys.argv[3]); n = d["waiters"]
print(f"long poll: {n:,} waiters, gateway RSS +{b - a:,} KiB = {(b - a) / n:.1f} KiB per waiter ({a:,} KiB idle, {b:,} KiB waiting); "
      f"flip → last waiter answered p50 {d['lastP50Ms']:.0f} ms, max {d['lastMaxMs']:.0f} ms; per-waiter p99 {d['latency']['p99Ms']:.0f} ms")
print(f"long poll: {n:,} opened in {d['openSeconds']:.1f} s on {d['connections']:,} connections; {len(d['flips'])} flips, "
      + ", ".join(f"{f['skill']} last {f['lastMs']:.0f} ms" for f in d["flips"]) + f"; {d['errors']} errors")
PY
}
longpoll_run

# MCP (issue 22): the tools beside the HTTP endpoints they stand for, on a
# fresh gateway on the same store, no simulated fleet: GET …/read and
# tools/call load_skill of one skill, GET …/skills?q= and tools/call
# search_skills of one query, interleaved on one open-loop schedule of
# 400 requests a second (100 of each) for 15 s. Target: the MCP path at
# most 2x the plain HTTP one.
mcp_run() {
echo; echo "== MCP vs HTTP (skillgate-fleet mcp --rate 400/s --duration 15s: /read, /skills?q=, load_skill, search_skills)"
"$B/skillgate" serve --store "$work/store" --listen $listen 2>"$work/gateway-mcp.log" &
local gw=$! up="" rc=0
pids+=($gw)
for _ in $(seq 100); do curl -fsS -o /dev/null $base/readyz 2>/dev/null && { up=1; break; }; sleep 0.1; done
[ -n "$up" ] || { echo "mcp: the gateway did not get ready:"; tail "$work/gateway-mcp.log"; exit 1; }
"$B/skillgate-fleet" mcp --gateway $base --agent main --rate 400/s --duration 15s --json >"$out/mcp.json" 2>"$work/mcp.log" || rc=$?
kill $gw 2>/dev/null || true; wait $gw 2>/dev/null || true
if [ $rc -ne 0 ]; then
  echo "mcp: skillgate-fleet mcp failed (exit $rc):"; tail "$work/mcp.log"; cat "$out/mcp.json"; exit 1
fi
python3 - "$out/mcp.json" <<'PY' | tee "$out/mcp.txt"
import json, sys
d = json.load(open(sys.argv[1])); k = d["kinds"]; r = d["ratios"]
print(f"mcp: {d['scheduled']} requests due at {d['targetRate']:.0f}/s over {d['seconds']:.1f} s ({d['late']} late, {d['dropped']} dropped); skill {d['skill']}, query {d['query']!r}")
for name in ["read", "load_skill", "skills?q", "search_skills"]:
    l = k[name]["latency"]
    print(f"  {name:14s} p50 {l['p50Ms']:.3f} ms, p90 {l['p90Ms']:.3f} ms, p99 {l['p99Ms']:.3f} ms, max {l['maxMs']:.3f} ms ({k[name]['requests']} requests, {k[name]['errors']} errors)")
print(f"  load_skill / read: p50 {r['load_skill/read p50']:.2f}x, p99 {r['load_skill/read p99']:.2f}x; "
      f"search_skills / skills?q: p50 {r['search_skills/skills?q p50']:.2f}x, p99 {r['search_skills/skills?q p99']:.2f}x (target: at most 2x)")
PY
}
mcp_run
# BEFORE=REV make bench: the same run against the gateway of another
# commit, for before/after figures from one run.
if [ -n "${BEFORE:-}" ]; then
  git worktree add -q --detach "$work/before-src" "$BEFORE"
  (cd "$work/before-src" && go build -o "$work/before/" ./cmd/skillgate)
  git worktree remove --force "$work/before-src"
  fleet_run before "$work/before/skillgate"
fi
bash scripts/bench-cluster.sh
echo; echo "raw results in $out/"
