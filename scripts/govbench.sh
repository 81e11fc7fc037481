#!/usr/bin/env bash
# make govbench: the governance scanner on the labelled public skill sets
# (internal/govbench; the sets are in ../shared/corpus/external beside the
# checkout). Prints per set the held / blocked / flagged skills of each
# label and per rule the skills it hit, then rewrites BENCHMARKS.md's
# section "Governance on labelled public sets (issue 20)" (between the
# govbench markers; the first time, above the first section) with the
# same figures, the commit and the date. Extra arguments go to the
# command (-v: also the malicious skills not held).
set -euo pipefail
cd "$(dirname "$0")/.."
out=BENCHMARKS.md
begin='<!-- govbench: begin (scripts/govbench.sh rewrites this section) -->'
end='<!-- govbench: end -->'

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# The figures are the working tree's: say so when it differs from the
# commit (BENCHMARKS.md itself aside).
if [ "$commit" != unknown ] && [ -n "$(git status --porcelain -- . ':!BENCHMARKS.md')" ]; then
  commit=$commit+dirty
fi
section="$(mktemp "${TMPDIR:-/tmp}/govbench.XXXXXX")"
next="$(mktemp "${TMPDIR:-/tmp}/govbench.XXXXXX")"
trap 'rm -f "$section" "$next"' EXIT

go run ./internal/govbench/cmd -markdown "$section" -commit "$commit" -command "make govbench" "$@"

if grep -qF "$begin" "$out"; then
  # Replace what is between the markers.
  awk -v b="$begin" -v e="$end" -v f="$section" '
    $0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
    $0 == e { skip = 0 }
    !skip' "$out" >"$next"
else
  # The first time: above the first section, newest first like the rest.
  awk -v b="$begin" -v e="$end" -v f="$section" '
    !done && /^## / { print b; while ((getline l < f) > 0) print l; print e; print ""; done = 1 }
    { print }' "$out" >"$next"
fi
mv "$next" "$out"
trap 'rm -f "$section"' EXIT
echo
echo "wrote the section \"Governance on labelled public sets (issue 20)\" of $out"
