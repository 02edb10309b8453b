#!/usr/bin/env bash
# capture.sh records the node exporter pages the exporter tests read: two
# reads one second apart (t0.prom, t1.prom) of Debian's
# prometheus-node-exporter, run here on a free loopback port with the
# collectors internal/testfleet runs, while dd writes with O_DIRECT so that
# the disk counters move.
#
# Usage: internal/telemetry/testdata/exporter/capture.sh [outdir]   (Linux, any user)
set -euo pipefail

out=${1:-$(cd "$(dirname "$0")" && pwd)}
work=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
prometheus-node-exporter --web.listen-address=127.0.0.1:$port \
	--collector.disable-defaults --collector.cpu --collector.stat --collector.loadavg \
	--collector.meminfo --collector.diskstats --collector.pressure >"$work/exporter.log" 2>&1 &
exporter=$!
dd if=/dev/zero of="$work/write" bs=16k count=100000 oflag=direct,dsync status=none &
writer=$!
cleanup() {
	kill "$exporter" "$writer" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
until curl -sf "http://127.0.0.1:$port/metrics" >/dev/null; do sleep 0.1; done
curl -sf "http://127.0.0.1:$port/metrics" >"$out/t0.prom"
sleep 1
curl -sf "http://127.0.0.1:$port/metrics" >"$out/t1.prom"
echo "captured into $out"
