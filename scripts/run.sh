#!/usr/bin/env bash
# make run / make dev: a gateway on the example skills plus one local node,
# then the prompt block and commands to try. Ctrl-C stops everything.
#   scripts/run.sh [--minio] [LISTEN]
set -euo pipefail
cd "$(dirname "$0")/.."
use_minio=false
if [ "${1:-}" = "--minio" ]; then use_minio=true; shift; fi
listen="${1:-127.0.0.1:7780}"
base="http://$listen"
work="$(mktemp -d "${TMPDIR:-/tmp}/skillgate-run.XXXXXX")"
nodebin="$work/node-bin"   # the node's own PATH dir: install binaries here
mkdir -p "$nodebin"
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
  echo "$2 did not come up; its log:" >&2
  cat "$work"/*.log >&2 || true
  exit 1
}

store="examples/store"
if $use_minio; then
  export PATH="$(go env GOPATH)/bin:$PATH"
  export MINIO_ROOT_USER=skillgate MINIO_ROOT_PASSWORD=skillgate-dev-secret
  export AWS_ACCESS_KEY_ID=$MINIO_ROOT_USER AWS_SECRET_ACCESS_KEY=$MINIO_ROOT_PASSWORD
  minio server "$work/minio" --address 127.0.0.1:9900 --console-address 127.0.0.1:9901 >"$work/minio.log" 2>&1 &
  pids+=($!)
  wait_http http://127.0.0.1:9900/minio/health/ready MinIO
  go run ./internal/seed --endpoint http://127.0.0.1:9900 --bucket skills examples/store
  store="s3://skills?endpoint=http://127.0.0.1:9900&region=us-east-1"
fi

echo "starting gateway on $base (store: $store)"
./bin/skillgate serve --listen "$listen" --store "$store" --config examples/gateway.hujson >"$work/gateway.log" 2>&1 &
pids+=($!)
wait_http "$base/healthz" gateway

echo "starting a local node (PATH: $nodebin:\$PATH, re-check every 2s)"
./bin/skillgate-node --gateway "$base" --id local --path "$nodebin:$PATH" --recheck 2s >"$work/node.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do
  curl -fsS "$base/v1/nodes" | grep -q '"factsAt":"' && break
  sleep 0.1
done

echo
echo "== GET $base/v1/agents/main/prompt"
curl -fsS "$base/v1/agents/main/prompt"; echo
cat <<EOT

Try:
  curl -s $base/v1/agents/main/prompt          # the block an agent pastes
  curl -s $base/v1/agents/main/skills          # every skill, eligible or not, and why
  curl -s $base/v1/nodes                       # connected nodes and their facts
  ./bin/skillgate status --gateway $base --agent main
  # install a binary on the node and watch the github skill appear (within 2s):
  printf '#!/bin/sh\n' > $nodebin/gh && chmod +x $nodebin/gh
  curl -s $base/v1/agents/main/prompt

Logs: $work/gateway.log $work/node.log. Ctrl-C stops the gateway and the node.
EOT
wait -n "${pids[@]}"
