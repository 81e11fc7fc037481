#!/usr/bin/env bash
# Issue 23's cluster figures, in its own set-up: one NATS server with
# JetStream, three replicas A, B, C (TTL 10 s) over a store of 1,000
# synthetic skills, one `skillgate-fleet nodes -n N --connect-rate 20000/s`
# process pinned to each replica (the simulator's default mix). Counts are
# read from each replica's /readyz (nodes + remoteNodes). Measured:
#   1. at rest, from 10 s after every replica lists all 3N nodes: the CPU of
#      NATS and the three replicas together over 20 s (% of one core);
#   2. RSS of each replica before and with the fleet;
#   3. A killed with SIGKILL and started again at once (same name, port):
#      when A's /readyz is 200 with "cluster":"ok" (aReady), with at least
#      the other replicas' 2N remote nodes counted (aRemoteAll; the records
#      of its run before count as remote until their nodes reconnect) and
#      with nodes + remoteNodes = 3N (aCountsAll), and, sampled every 250 ms
#      from the kill until 10 s after, the fewest nodes B and C count (3N
#      when none is dropped);
#   4. A killed and not started again: when B and C count 2N (A's nodes
#      gone; the TTL is 10 s).
# N is NODES_PER_REPLICA (default 10000); REST_SECONDS (default 20) is the
# at-rest window. Loopback only. Ports: NATS_PORT
# (4222), NATS_MON (8222), FIRST_PORT (7791..7793). Results on stdout and in
# bench-results/cluster-rest.txt, logs in bench-results/cluster-rest-logs/.
#   NODES_PER_REPLICA=10000 bash scripts/bench-cluster-rest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
out=bench-results
mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-bench-rest.XXXXXX")"
N=${NODES_PER_REPLICA:-10000}
nats_port=${NATS_PORT:-4222}
mon_port=${NATS_MON:-8222}
first=${FIRST_PORT:-7791}
ttl=10
rest=${REST_SECONDS:-20} # the at-rest window; 90 s or more includes the gateway's pings of silent nodes (every 45 s)
declare -A port url rpid fpid
names=(A B C)
for i in 0 1 2; do
  port[${names[$i]}]=$((first + i))
  url[${names[$i]}]=http://127.0.0.1:$((first + i))
done

cleanup() {
  local rc=$? p
  trap - EXIT INT TERM
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in $(jobs -p); do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$out/cluster-rest-logs"
  mkdir -p "$out/cluster-rest-logs"
  cp "$work"/*.log "$out/cluster-rest-logs/" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    echo "bench-cluster-rest: FAILED (exit $rc); logs in $out/cluster-rest-logs/" >&2
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "bench-cluster-rest: $*" >&2; exit 1; }

for p in "$nats_port" "$mon_port" "${port[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    die "port $p on 127.0.0.1 is already in use (set NATS_PORT, NATS_MON or FIRST_PORT)"
  fi
done

{
  echo "date:    $(date -u +%FT%TZ)"
  echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "nats:    $(nats-server --version)"
  echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "nodes:   $N per replica, $((3 * N)) in all; TTL ${ttl}s"
} | tee "$out/cluster-rest.txt"

go build -o "$work/bin/" ./cmd/skillgate ./cmd/skillgate-fleet
B="$work/bin"
"$B/skillgate-fleet" skills --out "$work/store" -n 1000 --probe >/dev/null
echo "{\"gateway\": {\"cluster\": {\"ttl\": \"${ttl}s\"}}}" >"$work/gateway.json"
(umask 077 && head -c 32 /dev/urandom | base64 >"$work/secret")

cat >"$work/h.py" <<'PY'
import json, os, sys, time, urllib.request, urllib.error

def readyz(base):
    try:
        with urllib.request.urlopen(base + "/readyz", timeout=2) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
    except Exception:
        return 0, {}

def count(base):
    st, d = readyz(base)
    return st, d, (d.get("nodes") or 0) + (d.get("remoteNodes") or 0)

def cpu_ms(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 // os.sysconf("SC_CLK_TCK")

def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "wait-all":  # wait-all TOTAL SECONDS URL...: until every replica counts TOTAL
    total, limit, bases = int(args[0]), float(args[1]), args[2:]
    t0 = time.time()
    while time.time() - t0 < limit:
        if all(count(b)[2] == total and count(b)[0] == 200 for b in bases):
            print(f"{time.time() - t0:.1f}")
            sys.exit(0)
        time.sleep(0.25)
    sys.exit(f"not every replica counts {total} after {limit} s: " + ", ".join(str(count(b)[2]) for b in bases))
elif cmd == "cpu":  # cpu SECONDS PID...: CPU of the PIDs together, % of one core
    secs, pids = float(args[0]), args[1:]
    c0 = [cpu_ms(p) for p in pids]; t0 = time.time()
    time.sleep(secs)
    c1 = [cpu_ms(p) for p in pids]; dt = time.time() - t0
    per = [(b - a) / dt / 10 for a, b in zip(c0, c1)]
    print(json.dumps({"seconds": round(dt, 1), "percentOfOneCore": round(sum(per), 2), "each": [round(x, 2) for x in per]}))
elif cmd == "rss":
    print(" ".join(str(rss(p)) for p in args))
elif cmd == "restart-watch":  # restart-watch GO TOTAL A B C: see the header, item 3
    go, total, a, others = args[0], int(args[1]), args[2], args[3:]
    while not os.path.exists(go) or not open(go).read().endswith("\n"):
        time.sleep(0.005)
    kill_t = float(open(go).read().split()[0])
    ev, least, last = {}, {o: None for o in others}, None
    while time.time() < kill_t + 10:
        now = time.time()
        st, d, n = count(a)
        if st:
            ev.setdefault("aAnswers", now)
            last = {"t": round(now - kill_t, 2), "status": st, "nodes": d.get("nodes"), "remoteNodes": d.get("remoteNodes"), "cluster": d.get("cluster")}
        if st == 200 and d.get("cluster") == "ok":
            ev.setdefault("aReady", now)
            if (d.get("remoteNodes") or 0) >= total * 2 // 3:
                ev.setdefault("aRemoteAll", now)  # its run before's records count as remote until taken back
            if n == total:
                ev.setdefault("aCountsAll", now)
        for o in others:
            _, _, k = count(o)
            least[o] = k if least[o] is None else min(least[o], k)
        time.sleep(max(0, 0.25 - (time.time() - now)))
    print(json.dumps({"sinceKill": {k: round(v - kill_t, 2) for k, v in ev.items()}, "leastOnOthers": list(least.values()), "aLast": last}))
elif cmd == "gone-watch":  # gone-watch KILL_EPOCH WANT URL...: until each counts WANT
    kill_t, want, bases = float(args[0]), int(args[1]), args[2:]
    done = {}
    while len(done) < len(bases) and time.time() < kill_t + 60:
        for b in bases:
            if b not in done and count(b)[2] == want:
                done[b] = round(time.time() - kill_t, 2)
        time.sleep(0.05)
    print(json.dumps(done))
PY
h() { python3 "$work/h.py" "$@"; }

nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$nats_port" -m "$mon_port" >"$work/nats.log" 2>&1 &
nats_pid=$!
for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$mon_port/healthz?js-enabled-only=true" 2>/dev/null && break; sleep 0.1; done
start_replica() {
  "$B/skillgate" serve --store "$work/store" --listen "127.0.0.1:${port[$1]}" --config "$work/gateway.json" \
    --cluster "nats://127.0.0.1:$nats_port" --replica "$1" --cluster-secret-file "$work/secret" >>"$work/replica-$1.log" 2>&1 &
  rpid[$1]=$!
}
for r in A B C; do start_replica "$r"; done
h wait-all 0 60 "${url[A]}" "${url[B]}" "${url[C]}" >/dev/null || die "the replicas did not get ready"
sleep 2
idle=$(h rss "${rpid[A]}" "${rpid[B]}" "${rpid[C]}")

echo
echo "\$ skillgate-fleet nodes --gateway URL -n $N --connect-rate 20000/s --id-prefix X-   # one per replica"
t0=$(date +%s.%N)
for r in A B C; do
  "$B/skillgate-fleet" nodes --gateway "${url[$r]}" -n "$N" --connect-rate 20000/s --id-prefix "$(echo "$r" | tr A-Z a-z)-" \
    --json >"$work/fleet-$r.json" 2>"$work/fleet-$r.log" &
  fpid[$r]=$!
done
secs=$(h wait-all $((3 * N)) 300 "${url[A]}" "${url[B]}" "${url[C]}") || die "the replicas did not converge"
echo "every replica counts $((3 * N)) nodes $secs s after the fleets started" | tee -a "$out/cluster-rest.txt"

sleep 10
cpu=$(h cpu "$rest" "$nats_pid" "${rpid[A]}" "${rpid[B]}" "${rpid[C]}")
echo "at rest (NATS, A, B, C; $rest s from 10 s after): $cpu" | tee -a "$out/cluster-rest.txt"
echo "RSS KiB of A B C: idle $idle, with the fleet $(h rss "${rpid[A]}" "${rpid[B]}" "${rpid[C]}")" | tee -a "$out/cluster-rest.txt"

rm -f "$work/go"
h restart-watch "$work/go" $((3 * N)) "${url[A]}" "${url[B]}" "${url[C]}" >"$work/restart.json" &
watcher=$!
sleep 1
tk=$(date +%s.%N)
kill -9 "${rpid[A]}"
wait "${rpid[A]}" 2>/dev/null || true
start_replica A
echo "$tk" >"$work/go"
wait $watcher
echo "A killed and started again at once: $(cat "$work/restart.json") (want aRemoteAll ≤ 5 s, leastOnOthers $((3 * N)))" | tee -a "$out/cluster-rest.txt"

h wait-all $((3 * N)) 120 "${url[A]}" "${url[B]}" "${url[C]}" >/dev/null || die "A did not get its nodes back"
sleep 5
tk=$(date +%s.%N)
kill -9 "${rpid[A]}"
wait "${rpid[A]}" 2>/dev/null || true
echo "A killed, not started again: B and C count $((2 * N)) after $(h gone-watch "$tk" $((2 * N)) "${url[B]}" "${url[C]}") s (want ≤ TTL + 1 s = $((ttl + 1)) s)" | tee -a "$out/cluster-rest.txt"
