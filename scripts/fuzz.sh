#!/usr/bin/env bash
# make fuzz: every native Go fuzz target, one after the other.
#   scripts/fuzz.sh GO_BINARY [PATTERN]
#
# FUZZTIME (default 30s) is each target's time; FUZZMINIMIZE (default 2s)
# bounds how long the fuzzer shrinks each new interesting input. Go's default
# is 60 s per input, and on a two-core machine a target that keeps finding new
# coverage then spends its whole time minimizing: it reports no executions for
# minutes. PATTERN (a grep pattern on "package FuzzName") picks targets.
# A target that fails leaves its input under testdata/fuzz/ of its package, to
# be committed with the fix as a seed; the script goes on and exits 1 at the end.
set -uo pipefail

GO=${1:?usage: scripts/fuzz.sh GO_BINARY [PATTERN]}
pattern=${2:-.}
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
minimize=${FUZZMINIMIZE:-2s}

targets=$(grep -rl --include='*_test.go' '^func Fuzz' internal cmd | while read -r f; do
	pkg=./$(dirname "$f")
	grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed "s|^func |$pkg |"
done | sort -u | grep -- "$pattern")

failed=()
while read -r pkg name; do
	[ -n "$name" ] || continue
	start=$(date +%s)
	out=$("$GO" test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize" "$pkg" 2>&1)
	rc=$?
	# The fuzzer's last progress line: executions and new interesting inputs.
	last=$(printf '%s\n' "$out" | grep -E '^fuzz: elapsed' | tail -1 | sed 's/^fuzz: //')
	if [ $rc -eq 0 ]; then
		printf 'ok    %-28s %-34s %ss  %s\n' "$pkg" "$name" "$(($(date +%s) - start))" "$last"
	else
		printf 'FAIL  %-28s %-34s %ss\n%s\n' "$pkg" "$name" "$(($(date +%s) - start))" "$(printf '%s\n' "$out" | tail -20)"
		failed+=("$pkg $name")
	fi
done <<<"$targets"

if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: %d target(s) failed: %s\n' "${#failed[@]}" "${failed[*]}"
	exit 1
fi
