#!/usr/bin/env bash
# The replica benchmarks (issue 13): one NATS server with JetStream, gateway
# replicas A, B, C (and D, which holds no node) over a `skills --probe` store
# of 1,000 skills, simulated nodes spread over A, B, C. Measured one thing at
# a time:
#   1. a facts.update on A → the changed prompt answered on C (long polls on
#      C, probe node on A), and the same with probe and waiters on C;
#   2. RSS of D per remote node (before the fleet, and with it);
#   3. NATS traffic (/varz) over a window without churn (renewals only) and
#      one with --churn 200/s, and the KV stream's bytes per node;
#   4. A killed with SIGKILL and restarted on the same port and name: time
#      to /readyz 200, to A listing every node and holding its own again,
#      and to B and C listing A's nodes on A again;
# also how long GET /v1/nodes of every node takes after a node change; then
# the memory, KV, traffic and restart figures again at each size of SCALE_N
# (default 20000; several sizes may be given, "20000 30000"; each in two
# fleet processes; a size at which the replicas do not converge within
# 120 s is reported as such; SCALE_N=0 skips them).
# Raw results go to bench-results/cluster-*, a summary to stdout. Loopback
# only. Ports: NATS_PORT (4222), NATS_MON (8222), FIRST_PORT (7791..7794).
#   bash scripts/bench-cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
out=bench-results
mkdir -p "$out"
rm -rf "$out"/cluster-*
work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-bench-cluster.XXXXXX")"
nats_port=${NATS_PORT:-4222}
mon_port=${NATS_MON:-8222}
first=${FIRST_PORT:-7791}
N=${CLUSTER_N:-10000} # CLUSTER_N: a smaller fleet, to try the script
SCALE_N=${SCALE_N:-20000}
ttl=10 # seconds: gateway.cluster.ttl
mon=http://127.0.0.1:$mon_port
declare -A port url rpid
names=(A B C D)
for i in 0 1 2 3; do
  port[${names[$i]}]=$((first + i))
  url[${names[$i]}]=http://127.0.0.1:$((first + i))
done
nats_pid=""

cleanup() {
  local rc=$? live p
  trap - EXIT INT TERM
  # Every process this script started is one of its jobs (a process that
  # ended and was not waited for stays a zombie, so its pid is not reused).
  live=$(jobs -p)
  for p in $live; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=""
    for p in $live; do kill -0 "$p" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && alive=1; done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  for p in $(jobs -p); do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    # Keep the logs of a failed run.
    mkdir -p "$out/cluster-failed-logs"
    cp "$work"/*.log "$out/cluster-failed-logs/" 2>/dev/null || true
    echo "bench-cluster: FAILED (exit $rc); logs in $out/cluster-failed-logs/" >&2
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
  echo "bench-cluster: $*" >&2
  for f in "$work"/*.log; do
    [ -f "$f" ] || continue
    echo "--- $(basename "$f") (last lines)" >&2
    tail -n 8 "$f" >&2
  done
  exit 1
}

for p in "$nats_port" "$mon_port" "${port[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    die "port $p on 127.0.0.1 is already in use (set NATS_PORT, NATS_MON or FIRST_PORT)"
  fi
done

{
  echo "date:    $(date -u +%FT%TZ)"
  echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "go:      $(go version)"
  echo "nats:    $(nats-server --version)"
  echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "ulimit:  $(ulimit -Sn) open files (hard $(ulimit -Hn))"
} | tee "$out/cluster-machine.txt"

go build -o "$work/bin/" ./cmd/skillgate ./cmd/skillgate-fleet
B="$work/bin"
"$B/skillgate-fleet" skills --out "$work/store" -n 1000 --probe >/dev/null
echo "{\"gateway\": {\"cluster\": {\"ttl\": \"${ttl}s\"}}}" >"$work/gateway.json"

# The helpers that read JSON and /proc.
cat >"$work/h.py" <<'PY'
import json, sys, time, urllib.request, urllib.error
from datetime import datetime, timezone

def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)

def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for pid {pid}")

def cpu_ms(pid):
    import os
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 // os.sysconf("SC_CLK_TCK")

def nats(mon):
    v = get(mon + "/varz")
    j = get(mon + "/jsz?accounts=1&streams=1")
    st = {"messages": 0, "bytes": 0, "last_seq": 0}
    for a in j.get("account_details", []):
        for s in a.get("stream_detail", []):
            if s["name"] == "KV_skillgate_nodes":
                st = s["state"]
    return {"t": time.time(), "in_bytes": v["in_bytes"], "out_bytes": v["out_bytes"], "in_msgs": v["in_msgs"],
            "out_msgs": v["out_msgs"], "kv_messages": st["messages"], "kv_bytes": st["bytes"], "kv_last_seq": st["last_seq"]}

def nodes(base):
    """Every node of /v1/nodes, paged: [(id, replica, connectedAt epoch)]."""
    res, cursor = [], ""
    while True:
        # A read after a node change re-encodes every node: tens of seconds at 20,000.
        d = get(base + "/v1/nodes?fields=id,replica,connectedAt&limit=10000" + ("&cursor=" + cursor if cursor else ""), timeout=120)
        for n in d["nodes"]:
            t = datetime.fromisoformat(n["connectedAt"].replace("Z", "+00:00")).timestamp()
            res.append((n["id"], n["replica"], t))
        cursor = d.get("next")
        if not cursor:
            return res

def readyz(base):
    try:
        with urllib.request.urlopen(base + "/readyz", timeout=2) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
    except Exception:
        return 0, {}

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "rss":  # rss PID...: VmRSS in KiB
    print(" ".join(str(rss(p)) for p in args))
elif cmd == "rss-samples":  # rss-samples PID COUNT: one sample a second, "max min"
    pid, k = args[0], int(args[1])
    s = []
    for i in range(k):
        if i:
            time.sleep(1)
        s.append(rss(pid))
    print(max(s), min(s))
elif cmd == "cpu":  # cpu PID...: user+system ms
    print(" ".join(str(cpu_ms(p)) for p in args))
elif cmd == "nats":  # nats MON: one JSON line of /varz and the KV stream
    print(json.dumps(nats(args[0])))
elif cmd == "remote":  # remote URL: remoteNodes of /readyz
    print(readyz(args[0])[1].get("remoteNodes", -1))
elif cmd == "wait-remote":  # wait-remote URL WANT SECONDS
    base, want, limit = args[0], int(args[1]), float(args[2])
    t0, seen = time.time(), []
    while time.time() - t0 < limit:
        st, d = readyz(base)
        seen.append((time.time() - t0, d.get("remoteNodes", -1)))
        if st == 200 and d.get("remoteNodes") == want:
            print(f"{time.time() - t0:.1f}")
            sys.exit(0)
        time.sleep(0.5)
    last = [r for t, r in seen if t > limit - 30]
    print(f"{base}: remoteNodes {readyz(base)[1].get('remoteNodes')} after {limit:.0f} s, want {want} "
          f"(over the last 30 s: min {min(last)}, max {max(last)}; /readyz {readyz(base)[1]})", file=sys.stderr)
    sys.exit(1)
elif cmd == "count-nodes":  # count-nodes URL: total, then per replica
    ns = nodes(args[0])
    per = {}
    for _, r, _ in ns:
        per[r] = per.get(r, 0) + 1
    print(len(ns), " ".join(f"{k}={v}" for k, v in sorted(per.items())))
elif cmd == "restart-watch":
    # restart-watch GO-FILE TOTAL OWN A_URL OTHER_URL...: once GO-FILE holds
    # "KILL_EPOCH RESTART_EPOCH", poll /readyz of A and the others every 0.1 s
    # (cheap) until A answers 200, lists TOTAL nodes (its own + remote) and
    # holds OWN; then read /v1/nodes of A and of each other replica (each read
    # re-encodes every node after a change: seconds at 10,000) until it lists
    # OWN nodes on A connected since the kill. Times are from the SIGKILL;
    # a /v1/nodes check counts at the time its request was sent. One JSON object.
    import os
    go, total, own = args[0], int(args[1]), int(args[2])
    a, others = args[3], args[4:]
    while not os.path.exists(go) or not open(go).read().endswith("\n"):
        time.sleep(0.005)
    kill_t, restart_t = map(float, open(go).read().split())
    since = int(kill_t)  # connectedAt has whole seconds; every node connected well before the kill
    ev, samples, minremote = {}, [], {o: None for o in others}
    t_end = kill_t + 180
    while time.time() < t_end:
        now = time.time()
        st, d = readyz(a)
        s = {"t": round(now - kill_t, 3), "aStatus": st, "aLocal": d.get("nodes"), "aRemote": d.get("remoteNodes"), "aCluster": d.get("cluster")}
        if st:
            ev.setdefault("aAnswers", now)
        if st == 200:
            ev.setdefault("aReadyzOk", now)
            if d.get("nodes", 0) + d.get("remoteNodes", 0) == total:
                ev.setdefault("aListsAll", now)
            if d.get("nodes") == own:
                ev.setdefault("aHoldsOwn", now)
        for i, o in enumerate(others):
            _, d = readyz(o)
            s[f"other{i}Remote"] = d.get("remoteNodes")
            if d.get("remoteNodes") is not None:
                minremote[o] = d["remoteNodes"] if minremote[o] is None else min(minremote[o], d["remoteNodes"])
        samples.append(s)
        if all(k in ev for k in ("aReadyzOk", "aListsAll", "aHoldsOwn")):
            break
        time.sleep(0.1)
    checks = []
    for name, base in [("a", a)] + [(f"other{i}", o) for i, o in enumerate(others)]:
        while time.time() < t_end:
            t0 = time.time()
            ns = nodes(base)
            fresh = sum(1 for _, r, c in ns if r == "A" and c >= since)
            checks.append({"replica": name, "sentAt": round(t0 - kill_t, 3), "took": round(time.time() - t0, 3), "listed": len(ns), "freshOnA": fresh})
            if len(ns) == total and fresh == own:
                ev.setdefault(name + "NodesFresh", t0)
                break
            time.sleep(0.2)
    rel = {k: round(v - kill_t, 3) for k, v in ev.items()}
    print(json.dumps({"sinceKillSeconds": rel, "restartAfterKillSeconds": round(restart_t - kill_t, 3), "others": others,
                      "minRemoteOnOthers": minremote, "nodesChecks": checks, "samples": samples}))
else:
    raise SystemExit("h.py: unknown command " + cmd)
PY
h() { python3 "$work/h.py" "$@"; }

wait_http() { # url what [tenths of a second]
  for _ in $(seq "${3:-100}"); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  die "$2 did not come up ($1)"
}

start_nats() {
  nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$nats_port" -m "$mon_port" >>"$work/nats.log" 2>&1 &
  nats_pid=$!
  wait_http "$mon/healthz?js-enabled-only=true" "nats-server"
}

start_replica() { # name
  local r=$1
  [ -s "$work/cluster-secret" ] || (umask 077 && head -c 32 /dev/urandom | base64 >"$work/cluster-secret")
  "$B/skillgate" serve --store "$work/store" --listen "127.0.0.1:${port[$r]}" --config "$work/gateway.json" \
    --cluster "nats://127.0.0.1:$nats_port" --replica "$r" --cluster-secret-file "$work/cluster-secret" >>"$work/replica-$r.log" 2>&1 &
  rpid[$r]=$!
}

ready_replica() { # name: /readyz 200 with "cluster":"ok" (it read the bucket)
  local r=$1
  for _ in $(seq 300); do
    kill -0 "${rpid[$r]}" 2>/dev/null || die "replica $r (pid ${rpid[$r]}) exited"
    if curl -fsS "${url[$r]}/readyz" 2>/dev/null | grep -q '"cluster":"ok"'; then return 0; fi
    sleep 0.1
  done
  die "replica $r did not get ready with the cluster (${url[$r]}/readyz: $(curl -sS "${url[$r]}/readyz" 2>&1))"
}

stop_replica() { # name: SIGTERM, a clean stop (its nodes withdrawn)
  local r=$1
  kill "${rpid[$r]}" 2>/dev/null || true
  wait "${rpid[$r]}" 2>/dev/null || true
}

# fleet NAME N PREFIX [flags…]: a fleet process over A, B and C, run until
# stop_fleet; its pid is in fleet_pid[NAME].
declare -A fleet_pid
fleet() {
  local name=$1 n=$2 prefix=$3; shift 3
  rm -f "$work/ready-$name"
  "$B/skillgate-fleet" nodes --gateway "${url[A]},${url[B]},${url[C]}" -n "$n" --id-prefix "$prefix" \
    --ready-file "$work/ready-$name" --json "$@" >"$out/cluster-nodes-$name.json" 2>"$work/fleet-$name.log" &
  fleet_pid[$name]=$!
}
await_fleet() { # NAME: until its ready file (every node connected and reported)
  local name=$1
  for _ in $(seq 1800); do
    [ -f "$work/ready-$name" ] && return 0
    kill -0 "${fleet_pid[$name]}" 2>/dev/null || die "fleet $name exited before its nodes were up"
    sleep 0.1
  done
  die "fleet $name: its nodes did not all come up within 180 s"
}
stop_fleet() { # NAME: SIGINT (it prints its report and exits)
  local name=$1
  kill -INT "${fleet_pid[$name]}" 2>/dev/null || true
  wait "${fleet_pid[$name]}" 2>/dev/null || true
  python3 - "$out/cluster-nodes-$name.json" "$name" <<'PY' | tee -a "$out/cluster-fleets.txt"
import json, sys
d = json.load(open(sys.argv[1]))
per = ", ".join(f"{g['gateway'].rsplit(':', 1)[1]} {g['connected']}" for g in d["perGateway"])
errs = "; ".join(f"{e['kind']} {e['count']} (first: {e['first'][:120]})" for e in d["errorKinds"]) or "none"
up = d["allConnectedSeconds"]
print(f"fleet {sys.argv[2]}: {d['nodes']} nodes ({per}), all up in {up if up is None else round(up, 1)} s, "
      f"{d['connects']} connects of {d['dials']} dials, churned {d['churned']}; errors {d['errors']}: {errs}")
PY
}

# memory LABEL NODES: RSS of every replica running; D's the max of 5
# samples a second apart (the others one sample), after a prompt request on
# each. LABEL "idle" is before the fleet.
memory() {
  local label=$1 n=$2 r
  for r in A B C D; do curl -fsS -o /dev/null "${url[$r]}/v1/agents/main/prompt"; done
  sleep 1
  read -r dmax dmin < <(h rss-samples "${rpid[D]}" 5)
  [ -n "${dmax:-}" ] || die "no RSS samples of D"
  echo "$label $n D $dmax $dmin $(h rss "${rpid[A]}" "${rpid[B]}" "${rpid[C]}")" >>"$work/memory.txt"
  echo "RSS ($label, $n nodes): D max $dmax KiB (min $dmin) of 5 samples 1 s apart; A B C: $(h rss "${rpid[A]}" "${rpid[B]}" "${rpid[C]}") KiB"
}

# window LABEL SECONDS [FLEET]: NATS /varz and the KV stream before and
# after SECONDS of nothing but the fleet, with the CPU of NATS and the
# replicas A, B, C, and the churn count from FLEET's progress lines.
churned_now() { # the churned count of the fleet's last progress line
  sed -n 's/.*| churned \([0-9]*\) |.*/\1/p' "$work/fleet-$1.log" | tail -1
}
window() {
  local label=$1 secs=$2 fl=${3:-} c0=0 c1=0
  local cpu0 cpu1 n0 n1
  [ -n "$fl" ] && c0=$(churned_now "$fl")
  cpu0=$(h cpu "$nats_pid" "${rpid[A]}" "${rpid[B]}" "${rpid[C]}")
  n0=$(h nats "$mon")
  sleep "$secs"
  n1=$(h nats "$mon")
  cpu1=$(h cpu "$nats_pid" "${rpid[A]}" "${rpid[B]}" "${rpid[C]}")
  [ -n "$fl" ] && c1=$(churned_now "$fl")
  python3 - "$label" "$n0" "$n1" "$cpu0" "$cpu1" "$c0" "$c1" >>"$out/cluster-nats-windows.jsonl" <<'PY'
import json, sys
label, a, b = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
c0, c1 = [int(x) for x in sys.argv[4].split()], [int(x) for x in sys.argv[5].split()]
dt = b["t"] - a["t"]
d = {k: b[k] - a[k] for k in ("in_bytes", "out_bytes", "in_msgs", "out_msgs", "kv_last_seq")}
print(json.dumps({"label": label, "seconds": round(dt, 3), "delta": d, "kvMessages": b["kv_messages"], "kvBytes": b["kv_bytes"],
                  "cpuMsPerSecond": {k: round((y - x) / dt, 1) for k, x, y in zip(["nats", "A", "B", "C"], c0, c1)},
                  "churned": int(sys.argv[7]) - int(sys.argv[6])}))
PY
  tail -1 "$out/cluster-nats-windows.jsonl" | python3 -c '
import json, sys
w = json.load(sys.stdin); d = w["delta"]; s = w["seconds"]
print("NATS window %s: %.1f s, in %.2f MB/s (%.0f msgs/s), out %.2f MB/s (%.0f msgs/s), KV writes %.0f/s; KV %d records, %d bytes; churned %d; CPU ms/s %s" % (
      w["label"], s, d["in_bytes"] / s / 1e6, d["in_msgs"] / s, d["out_bytes"] / s / 1e6, d["out_msgs"] / s,
      d["kv_last_seq"] / s, w["kvMessages"], w["kvBytes"], w["churned"], w["cpuMsPerSecond"]))'
}

# restart LABEL TOTAL OWN: SIGKILL A, start it again at once on the same
# port and name, and watch it and B and C converge (the watcher is started
# first, so that its own start is not in the figures).
restart() {
  local label=$1 total=$2 own=$3 tk tr watcher rc=0
  rm -f "$work/go"
  h restart-watch "$work/go" "$total" "$own" "${url[A]}" "${url[B]}" "${url[C]}" >"$out/cluster-restart-$label.json" &
  watcher=$!
  sleep 1
  tk=$(date +%s.%N)
  kill -9 "${rpid[A]}"
  wait "${rpid[A]}" 2>/dev/null || true
  tr=$(date +%s.%N)
  echo "--- restarted after SIGKILL ($label)" >>"$work/replica-A.log"
  start_replica A
  echo "$tk $tr" >"$work/go"
  wait $watcher || rc=$?
  [ $rc -eq 0 ] || die "restart $label: the watcher failed (exit $rc)"
  python3 - "$out/cluster-restart-$label.json" "$label" "$total" "$own" <<'PY' | tee -a "$out/cluster-restart.txt"
import json, sys
d = json.load(open(sys.argv[1])); e = d["sinceKillSeconds"]; label, total, own = sys.argv[2:5]
f = lambda k: f"{e[k]:.2f} s" if k in e else "NEVER (within 180 s)"
took = {c["replica"]: c["took"] for c in d["nodesChecks"]}
print(f"restart ({label} nodes, {own} on A), times from the SIGKILL (A started again {d['restartAfterKillSeconds']:.2f} s after it): "
      f"A answers {f('aAnswers')}, /readyz 200 {f('aReadyzOk')}, lists all {total} (nodes + remoteNodes) {f('aListsAll')}, "
      f"holds its {own} again {f('aHoldsOwn')}; /v1/nodes lists A's {own} on A, connected since the kill: "
      f"A by {f('aNodesFresh')}, B by {f('other0NodesFresh')}, C by {f('other1NodesFresh')} "
      f"(each read took {', '.join(f'{v:.2f}' for v in took.values())} s); "
      f"fewest remoteNodes meanwhile on B {d['minRemoteOnOthers'][d['others'][0]]}, on C {d['minRemoteOnOthers'][d['others'][1]]}")
PY
  ready_replica A
}

# longpoll LABEL PROBE-REPLICA WAITER-REPLICA WAITERS
longpoll() {
  local label=$1 p=$2 w=$3 n=$4 rc=0
  local cmd=("$B/skillgate-fleet" longpoll --gateway "${url[$w]}" --probe-gateway "${url[$p]}" -n "$n" --flips 20 --json)
  echo "\$ skillgate-fleet longpoll --gateway ${url[$w]} --probe-gateway ${url[$p]} -n $n --flips 20 --json   # probe on $p, waiters on $w"
  "${cmd[@]}" >"$out/cluster-longpoll-$label.json" 2>"$work/longpoll-$label.log" || rc=$?
  [ $rc -eq 0 ] || die "longpoll $label failed (exit $rc): $(tail -3 "$work/longpoll-$label.log")"
  python3 - "$out/cluster-longpoll-$label.json" "$p" "$w" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
for kind in ("appear", "go"):
    fl = [f for f in d["flips"] if f["skill"] == kind]
    p50 = statistics.median(f["latency"]["p50Ms"] for f in fl)
    p99 = max(f["latency"]["p99Ms"] for f in fl)
    last = sorted(f["lastMs"] for f in fl)
    print(f"longpoll probe {sys.argv[2]} → waiters {sys.argv[3]}, {kind:6s} ({len(fl)} flips × {d['waiters']} waiters, from the {fl[0]['from']}): "
          f"per-waiter p50 {p50:.1f} ms (median of the flips' p50), p99 {p99:.1f} ms (highest flip p99); "
          f"last waiter: median {statistics.median(last):.1f} ms, max {last[-1]:.1f} ms")
print(f"longpoll probe {sys.argv[2]} → waiters {sys.argv[3]}: all {len(d['flips'])} flips, every waiter: p50 {d['latency']['p50Ms']:.1f} ms, "
      f"p99 {d['latency']['p99Ms']:.1f} ms, max {d['latency']['maxMs']:.1f} ms; {d['errors']} errors")
PY
}

# nodes_read REPLICA NODES: GET /v1/nodes of every node, the first read
# after the fleet came up (the answer is re-encoded after any node change)
# and a second one at once (cached).
nodes_read() {
  local r=$1 n=$2 t1 t2 q="fields=id,replica,connectedAt&limit=10000"
  t1=$(curl -fsS -o /dev/null -w '%{time_total}' "${url[$r]}/v1/nodes?$q")
  t2=$(curl -fsS -o /dev/null -w '%{time_total}' "${url[$r]}/v1/nodes?$q")
  echo "GET /v1/nodes?$q on $r ($n nodes; first page): first read after the fleet came up $t1 s, again at once $t2 s" | tee -a "$out/cluster-nodes-read.txt"
}

# A fleet run: replicas A–D fresh, D's RSS idle, the fleet of n nodes, D's
# RSS with them; then D stops (it has no part in the rest).
fresh_replicas() {
  local r
  for r in A B C D; do [ -n "${rpid[$r]:-}" ] && stop_replica "$r"; done
  for r in A B C D; do start_replica "$r"; done
  for r in A B C D; do ready_replica "$r"; done
}

echo; echo "== NATS (nats-server -js -sd DIR -a 127.0.0.1 -p $nats_port -m $mon_port) and replicas A B C D:"
echo "\$ skillgate serve --store DIR --listen 127.0.0.1:PORT --config F --cluster nats://127.0.0.1:$nats_port --replica NAME --cluster-secret-file S   # F: $(cat "$work/gateway.json")"
start_nats
fresh_replicas
sleep 4 # settle after start
memory idle 0 | tee -a "$out/cluster-memory.txt"

echo; echo "== fleet of $N nodes over A, B, C"
echo "\$ skillgate-fleet nodes --gateway ${url[A]},${url[B]},${url[C]} -n $N --ready-file F --json"
t0=$(date +%s.%N)
fleet steady "$N" sim-
await_fleet steady
echo "fleet up: $(cat "$work/ready-steady")"
secs=$(h wait-remote "${url[D]}" "$N" 120) || die "D never listed the $N nodes"
echo "D lists all $N remote nodes $(python3 -c "import time; print(f'{time.time() - $t0:.1f}')") s after the fleet started"
sleep $ttl # a TTL: every record renewed at least twice
memory fleet "$N" | tee -a "$out/cluster-memory.txt"
stop_replica D
nodes_read B "$N"

echo; echo "== 1. facts.update on one replica → changed prompt on another ($N nodes up)"
longpoll cross A C 200 | tee "$out/cluster-longpoll.txt"
longpoll same C C 200 | tee -a "$out/cluster-longpoll.txt"
# The same with 20 waiters: less of the time is answering the waiters.
longpoll cross-n20 A C 20 | tee -a "$out/cluster-longpoll.txt"
longpoll same-n20 C C 20 | tee -a "$out/cluster-longpoll.txt"

echo; echo "== 3a. NATS traffic, no churn: renewals only ($N nodes; 3 replicas; 30 s)"
window steady-$N 30 steady | tee -a "$out/cluster-nats.txt"

echo; echo "== 4. SIGKILL A and restart it ($N nodes, $((N / 3 + (N % 3 > 0 ? 1 : 0))) on A)"
restart $N "$N" $((N / 3 + (N % 3 > 0 ? 1 : 0)))
sleep 2
stop_fleet steady

echo; echo "== 3b. NATS traffic with churn ($N nodes, --churn 200/s; 30 s)"
echo "\$ skillgate-fleet nodes --gateway ${url[A]},${url[B]},${url[C]} -n $N --churn 200/s --ready-file F --json"
sleep $((ttl + 2)) # the last fleet's records gone
fleet churn "$N" sim- --churn 200/s
await_fleet churn
sleep $ttl # renewals of the fresh connects spread out
window churn200-$N 30 churn | tee -a "$out/cluster-nats.txt"
stop_fleet churn

for S in $SCALE_N; do
  [ "$S" -gt 0 ] || continue
  half=$((S / 2))
  echo; echo "== scale: $S nodes over A, B, C (two fleet processes of $half, the open-file limit being $(ulimit -Hn))"
  sleep $((ttl + 2))
  fresh_replicas
  sleep 4
  memory idle 0 | tee -a "$out/cluster-memory.txt"
  echo "\$ skillgate-fleet nodes --gateway ${url[A]},${url[B]},${url[C]} -n $half --id-prefix sim- --ready-file F --json   # and again with --id-prefix simb-"
  t0=$(date +%s.%N)
  fleet scale1-$S "$half" sim-
  fleet scale2-$S "$((S - half))" simb-
  await_fleet scale1-$S
  await_fleet scale2-$S
  if ! h wait-remote "${url[D]}" "$S" 120 >/dev/null 2>"$work/wait-$S.txt"; then
    # The fleet is up but the replicas do not converge: that is the
    # figure at this size (this machine cannot carry it), not a failure
    # of the script.
    {
      echo "SCALE $S: NOT CONVERGED: the fleets are up, but $(cat "$work/wait-$S.txt")"
      for r in A B C; do echo "  $r /readyz: $(curl -sS "${url[$r]}/readyz")"; done
      echo "  'slow consumer' warnings so far: $(grep -c 'slow consumer' "$work"/replica-*.log | tr '\n' ' ')"
    } | tee -a "$out/cluster-scale-not-converged.txt"
    window not-converged-$S 30 scale1-$S | tee -a "$out/cluster-nats.txt"
    stop_fleet scale1-$S
    stop_fleet scale2-$S
    continue
  fi
  echo "D lists all $S remote nodes $(python3 -c "import time; print(f'{time.time() - $t0:.1f}')") s after the fleets started"
  sleep $ttl
  memory fleet "$S" | tee -a "$out/cluster-memory.txt"
  stop_replica D
  nodes_read B "$S"
  window steady-$S 30 scale1-$S | tee -a "$out/cluster-nats.txt"
  # A holds the nodes i mod 3 = 0 of each fleet.
  own=$(( (half + 2) / 3 + (S - half + 2) / 3 ))
  restart "$S" "$S" "$own"
  sleep 2
  stop_fleet scale1-$S
  stop_fleet scale2-$S
done

echo; echo "== summary"
python3 - "$work/memory.txt" "$out/cluster-nats-windows.jsonl" "$ttl" <<'PY' | tee "$out/cluster-summary.txt"
import json, sys
rows = [l.split() for l in open(sys.argv[1])]
ttl = float(sys.argv[3])
idle = None
for r in rows:  # label n D dmax dmin A B C
    label, n, dmax, dmin, a, b, c = r[0], int(r[1]), int(r[3]), int(r[4]), int(r[5]), int(r[6]), int(r[7])
    if label == "idle":
        idle = (dmax, a, b, c)
        continue
    per_remote = (dmax - idle[0]) / n
    # A, B, C each hold n/3 local and 2n/3 remote nodes.
    loc = [((x - x0) - (2 * n / 3) * per_remote) / (n / 3) for x, x0 in zip((a, b, c), idle[1:])]
    print(f"memory at {n} nodes: D +{dmax - idle[0]} KiB = {per_remote * 1024:.0f} bytes ({per_remote:.2f} KiB) per remote node "
          f"(max of 5 samples, idle {idle[0]} KiB); A/B/C +{a - idle[1]}/+{b - idle[2]}/+{c - idle[3]} KiB, "
          f"so {min(loc):.1f}–{max(loc):.1f} KiB per local node (their growth less 2n/3 remote nodes at D's rate, over n/3)")
w = {x["label"]: x for x in map(json.loads, open(sys.argv[2]))}
for label, x in w.items():
    if not label.startswith("steady-"):
        continue
    n = int(label.split("-")[1]); d = x["delta"]; s = x["seconds"]
    per = (d["in_bytes"] + d["out_bytes"]) / n / (s / ttl)
    print(f"renewals at {n} nodes: {(d['in_bytes'] + d['out_bytes']) / s / 1e6:.2f} MB/s in+out ({d['in_msgs'] / s:.0f}+{d['out_msgs'] / s:.0f} msgs/s), "
          f"{d['kv_last_seq'] / s:.0f} KV writes/s = {d['kv_last_seq'] / n / (s / ttl):.2f} per node per TTL; "
          f"{per / 1024:.1f} KiB in+out per node per TTL ({d['in_bytes'] / n / (s / ttl) / 1024:.1f} in, {d['out_bytes'] / n / (s / ttl) / 1024:.1f} out); "
          f"KV {x['kvBytes'] / max(1, x['kvMessages']):.0f} bytes per record ({x['kvMessages']} records, {x['kvBytes']} bytes); CPU ms/s {x['cpuMsPerSecond']}")
for label, x in w.items():
    if not label.startswith("churn"):
        continue
    n = int(label.split("-")[1]); base = w.get(f"steady-{n}")
    if base is None:
        continue
    s, bs = x["seconds"], base["seconds"]
    extra = {k: x["delta"][k] - base["delta"][k] * s / bs for k in x["delta"]}
    c = x["churned"]
    print(f"churn at {n} nodes: {c} disconnect+reconnect cycles in {s:.1f} s; over the renewals-only window (scaled to the same length): "
          f"+{(extra['in_bytes'] + extra['out_bytes']) / 1e6:.2f} MB, +{extra['in_msgs'] + extra['out_msgs']:.0f} msgs, +{extra['kv_last_seq']:.0f} KV writes = "
          f"{(extra['in_bytes'] + extra['out_bytes']) / c / 1024:.1f} KiB in+out ({extra['in_bytes'] / c / 1024:.1f} in, {extra['out_bytes'] / c / 1024:.1f} out), "
          f"{(extra['in_msgs'] + extra['out_msgs']) / c:.1f} msgs and {extra['kv_last_seq'] / c:.2f} KV writes per cycle; "
          f"{(extra['in_bytes'] + extra['out_bytes']) / c / 2 / 1024:.1f} KiB per connect or disconnect event")
PY

{
  cat "$out/cluster-longpoll.txt" "$out/cluster-restart.txt" "$out/cluster-nodes-read.txt"
  cat "$out/cluster-scale-not-converged.txt" 2>/dev/null || true
} | tee -a "$out/cluster-summary.txt"

# Anything the replicas or NATS logged above info, but the store's skills
# that no node can run ("skill disabled", logged at each start).
grep -hE '"level":"(WARN|ERROR)"|\[(WRN|ERR)\]' "$work"/replica-*.log "$work/nats.log" | grep -v '"msg":"skill disabled' \
  >"$out/cluster-log-warnings.txt" || true
echo "warnings and errors in the replica and NATS logs: $(wc -l <"$out/cluster-log-warnings.txt") lines (cluster-log-warnings.txt)"
for f in "$work"/replica-*.log "$work/nats.log" "$work"/fleet-*.log "$work"/longpoll-*.log; do
  cp "$f" "$out/cluster-log-$(basename "$f")"
done
echo; echo "raw results in $out/cluster-*"
