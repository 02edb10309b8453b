#!/usr/bin/env bash
# make studies: every example suite at the scale its comments give for this
# machine, then one table of their findings in docs/studies.md.
#   scripts/studies.sh [SUITE.toml...]   (bin/dbio must be built; default:
#                                        every examples/*.toml)
#
# Each suite runs in its own working directory under STUDIES_DIR (default: a
# new directory under /var/tmp, kept, since its results are what the table
# is read from), where its ./dbio-suite targets and its results go. A suite
# that fails is reported and the others still run; the table then says
# which of its findings were not measured. STUDIES_OUT moves the table
# (default docs/studies.md).
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=$PWD/bin/dbio
[ -x "$BIN" ] || { echo "studies: $BIN is missing: build it first (make studies does)" >&2; exit 1; }
OUT=${STUDIES_OUT:-docs/studies.md}
work=${STUDIES_DIR:-$(mktemp -d /var/tmp/dbio-studies.XXXXXX)}
mkdir -p "$work"
# The database servers run as an unprivileged user, who must reach the targets.
chmod 755 "$work"

files=("$@")
[ ${#files[@]} -gt 0 ] || files=(examples/*.toml)
dirs=()
failed=()
for f in "${files[@]}"; do
	name=$(basename "$f" .toml)
	abs=$(realpath "$f")
	mkdir -p "$work/$name"
	chmod 755 "$work/$name"
	echo "=== studies: $name ($f), in $work/$name"
	if ! (cd "$work/$name" && "$BIN" suite "$abs" --create-target --results results 2>&1 | tee suite.log); then
		failed+=("$name")
	fi
	# The suite's directory, even when some of its runs failed.
	d=$(ls -d "$work/$name"/results/*-suite-* 2>/dev/null | tail -n1 || true)
	[ -n "$d" ] && dirs+=("$d")
done
[ ${#dirs[@]} -gt 0 ] || { echo "studies: no suite ran" >&2; exit 1; }
"$BIN" studies "${dirs[@]}" -o "$OUT"
if [ ${#failed[@]} -gt 0 ]; then
	echo "studies: these suites had failed runs: ${failed[*]} (see their suite.log under $work)" >&2
	exit 1
fi
