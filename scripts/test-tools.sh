#!/usr/bin/env bash
# Installs the system tools the tests drive when they are missing: Debian's
# chromium (the console's browser test), systemd-analyze (the deploy
# test's unit verification), OpenSSH's ssh-keygen (the signed publishers'
# interoperability tests), yara (the external scanners' tests run the YARA
# adapter of examples/scanners/yara), Node.js and the official MCP
# TypeScript SDK (npm ci in testdata/mcp, the version package-lock.json
# pins: the MCP tests' client). A failed install fails the run: a test never skips for
# want of them.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v ssh-keygen >/dev/null || need+=(openssh-client)
command -v yara >/dev/null || need+=(yara)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (for the console's browser test, the systemd unit check, the SKILL.sig and YARA scanner tests and the MCP client tests)…"
  $SUDO apt-get update
  $SUDO apt-get install -y "${need[@]}"
fi
command -v chromium >/dev/null
command -v systemd-analyze >/dev/null
command -v ssh-keygen >/dev/null
command -v yara >/dev/null
command -v node >/dev/null
# The MCP TypeScript SDK at the version package.json pins (package-lock.json
# pins the rest).
mcp="$(cd "$(dirname "$0")/../testdata/mcp" && pwd)"
sdkver() { node -e 'try { console.log(require(process.argv[1]).version) } catch { console.log("none") }' "$1"; }
want=$(node -e 'console.log(require(process.argv[1]).dependencies["@modelcontextprotocol/sdk"])' "$mcp/package.json")
if [ "$(sdkver "$mcp/node_modules/@modelcontextprotocol/sdk/package.json")" != "$want" ]; then
  echo "installing the MCP TypeScript SDK $want (npm ci in testdata/mcp)…"
  (cd "$mcp" && npm ci --no-audit --no-fund)
fi
[ "$(sdkver "$mcp/node_modules/@modelcontextprotocol/sdk/package.json")" = "$want" ]
