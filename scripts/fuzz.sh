#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every fuzz target of the module (or those whose name matches $1,
# a grep pattern) for $FUZZTIME each (default 10m), one after another, one
# worker each, and prints a line per target. `make fuzz` runs it; CI only
# replays the seeds and the committed corpora (testdata/fuzz/, which is
# where `go test -fuzz` writes an input that fails: commit it with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10m}
pattern=${1:-.}
status=0
while IFS=: read -r file name; do
	dir=./$(dirname "$file")
	if ! echo "$name" | grep -q -- "$pattern"; then
		continue
	fi
	start=$(date +%s)
	if out=$($GO test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -parallel 1 "$dir" 2>&1); then
		res=ok
	else
		res=FAIL status=1
	fi
	execs=$(echo "$out" | sed -n 's/.*execs: \([0-9]*\).*/\1/p' | tail -n 1)
	printf '%-4s %-32s %-28s %6ss %s execs\n' "$res" "$name" "$dir" "$(($(date +%s) - start))" "${execs:-?}"
	[ "$res" = ok ] || echo "$out" | tail -n 30
done < <(grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | sed 's|^\./||; s|:func |:|')
exit "$status"
