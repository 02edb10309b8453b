#!/usr/bin/env bash
# Renders a real report as a PNG, the picture the README shows: a short
# dbio quick (about a minute and a half) into a results directory made for
# it, then that run's report.html in headless Chromium.
#   scripts/screenshot.sh DBIO OUT.png
# `make screenshot` builds dbio and writes docs/report.png.
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: $0 DBIO OUT.png" >&2
	exit 2
fi
dbio=$1
out=$(realpath -m "$2")
command -v chromium >/dev/null || { echo "screenshot: chromium is missing: apt-get install -y chromium" >&2; exit 1; }
work=$(mktemp -d /tmp/dbio-report-example.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A real run, shortened: the device pass and three user steps.
"$dbio" quick --target "$work/data" --create-target --results "$work/results" \
	--disk-runtime 2s --users 1,2,4 --ramp-time 2s --runtime 10s
report=$(ls "$work"/results/*-quick-sqlite/report.html)

# The top of the report, where a reader starts: the header, the summary
# and the first charts. Offline, with a throw-away profile.
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
	--disable-sync --no-first-run --hide-scrollbars --force-device-scale-factor=1 \
	--user-data-dir="$work/profile" --window-size=1280,1860 --screenshot="$out" "file://$report" 2>/dev/null
echo "screenshot: $out ($(du -h "$out" | cut -f1)) from $report"
