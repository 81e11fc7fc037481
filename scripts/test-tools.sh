#!/usr/bin/env bash
# Installs the system tools the tests drive when they are missing: Debian's
# chromium (the console's browser test) and systemd-analyze (the deploy
# test's unit verification). A failed install fails the run: a test never
# skips for want of them.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v systemd-analyze >/dev/null || need+=(systemd)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (for the console's browser test and the systemd unit check)…"
  $SUDO apt-get update
  $SUDO apt-get install -y "${need[@]}"
fi
command -v chromium >/dev/null
command -v systemd-analyze >/dev/null
