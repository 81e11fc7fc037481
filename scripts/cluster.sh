#!/usr/bin/env bash
# make cluster: a local NATS server with JetStream, three gateway replicas
# sharing the fleet through it (over the example store), and two nodes
# spread over them; prints the prompt block from every replica and what to
# try. Ctrl-C stops everything.
#   scripts/cluster.sh [FIRST_PORT]   (replicas on FIRST_PORT..+2, default 7781)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
first="${1:-7781}"
nats_port=4222
work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-cluster.XXXXXX")"
ghbin="$work/builder-bin" # node "builder" has gh; node "reviewer" does not
mkdir -p "$ghbin"
printf '#!/bin/sh\necho gh\n' >"$ghbin/gh" && chmod +x "$ghbin/gh"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

wait_http() { # url, what
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$2 did not come up; the logs:" >&2
  tail -n 20 "$work"/*.log >&2 || true
  exit 1
}

echo "starting NATS with JetStream on 127.0.0.1:$nats_port"
nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$nats_port" -m 8222 >"$work/nats.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:8222/healthz?js-enabled-only=true" NATS

# Every replica signs its records with the same secret, and refuses the
# records of anyone without it (a file, never the command line).
(umask 077 && head -c 32 /dev/urandom | base64 >"$work/cluster-secret")

bases=()
declare -A replica_pid
for i in 1 2 3; do
  port=$((first + i - 1))
  base="http://127.0.0.1:$port"
  bases+=("$base")
  ./bin/skillgate serve --listen "127.0.0.1:$port" --store examples/store --config examples/gateway.hujson \
    --cluster "nats://127.0.0.1:$nats_port" --replica "r$i" --cluster-secret-file "$work/cluster-secret" >"$work/r$i.log" 2>&1 &
  pids+=($!)
  replica_pid[r$i]=$!
  echo "replica r$i on $base (pid $!)"
done
for b in "${bases[@]}"; do wait_http "$b/readyz" "replica $b"; done
all="$(IFS=,; echo "${bases[*]}")"

# Each node starts at its own place in the list (a hash of its id) and
# moves to the next replica when its replica goes away.
./bin/skillgate-node --gateway "$all" --id builder --path "$ghbin:$PATH" --recheck 2s >"$work/builder.log" 2>&1 &
pids+=($!)
builder_pid=$!
./bin/skillgate-node --gateway "$all" --id reviewer --path "/nonexistent" --recheck 2s >"$work/reviewer.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  n=$( (curl -fsS "${bases[2]}/v1/nodes?fields=id,factsAt" || true) | grep -o '"factsAt":"' | wc -l || true)
  [ "$n" -ge 2 ] && break
  sleep 0.1
done

holder=$(curl -fsS "${bases[0]}/v1/nodes?id=builder&fields=id,replica" | sed -n 's/.*"replica":"\([^"]*\)".*/\1/p')
for i in 1 2 3; do
  echo
  echo "== GET ${bases[$((i - 1))]}/v1/agents/main/prompt   (replica r$i)"
  curl -fsS "${bases[$((i - 1))]}/v1/agents/main/prompt"; echo
done
other=${bases[2]}
[ "$holder" = "r3" ] && other=${bases[0]}
cat <<EOT

Node "builder" (it has gh) is held by replica $holder; node "reviewer" (no gh) by
$(curl -fsS "${bases[0]}/v1/nodes?id=reviewer&fields=id,replica" | sed -n 's/.*"replica":"\([^"]*\)".*/\1/p').
Every replica offers the github skill, whichever holds the node.

Try:
  curl -s ${bases[0]}/v1/nodes?fields=id,replica         # every node, on every replica, with its holder
  curl -s ${bases[0]}/readyz                             # "cluster": "ok"
  kill -9 ${replica_pid[$holder]:-PID}                   # the replica holding builder dies…
  curl -s $other/v1/nodes?fields=id,replica               # …builder moves to the next replica in a
  curl -s $other/v1/agents/main/prompt                   # few seconds, and github stays offered
  kill -STOP $builder_pid; kill -9 PID-OF-ITS-NEW-REPLICA  # a replica dies while its node cannot move:
  curl -s $other/v1/agents/main/prompt                   # github leaves within the TTL (10s)
  kill -CONT $builder_pid                                # the node moves on, and github is back

Logs: $work/*.log. Ctrl-C stops NATS, the replicas and the nodes.
EOT
# Replicas and nodes may be killed to try things out: only NATS ending
# ends the demo.
wait "${pids[0]}"
