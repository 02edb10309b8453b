#!/usr/bin/env bash
# capture.sh records the /proc snapshots the telemetry tests read: two
# snapshots one second apart (t0, t1) of a machine under a little load, so the
# tests run the sampler on real kernel output instead of invented text.
#
# The load: a parent shell with two CPU-burning children stands in for a
# database server (its pid is written to server-pid), and a dd writing
# with O_DIRECT on the disk under $TMPDIR stands in for dbio (its /proc/<pid>
# is stored as proc/self) while a loop of direct reads adds read traffic.
#
# Usage: internal/telemetry/testdata/capture.sh [outdir]   (Linux, any user)
set -euo pipefail

out=${1:-$(cd "$(dirname "$0")" && pwd)/snap}
work=$(mktemp -d)
cleanup() {
	pkill -P "$server" 2>/dev/null || true
	kill "$server" "$writer" "$reader" 2>/dev/null || true
	rm -rf "$work"
}

dd if=/dev/zero of="$work/read" bs=1M count=64 status=none
sync
bash -c 'bash -c "while :; do :; done" & bash -c "while :; do :; done" & wait' &
server=$!
dd if=/dev/zero of="$work/write" bs=16k count=100000 oflag=direct,dsync status=none &
writer=$!
(while :; do dd if="$work/read" of=/dev/null bs=64k iflag=direct status=none; done) &
reader=$!
trap cleanup EXIT
sleep 1

copy() { # copy SRC DST: /proc files report size 0, so read them with cat
	mkdir -p "$(dirname "$2")"
	cat "$1" >"$2" 2>/dev/null || rm -f "$2"
}

copyproc() { # copyproc PID DST: stat, statm, status and every thread's children list
	local pid=$1 dst=$2 task
	copy "/proc/$pid/stat" "$dst/stat"
	copy "/proc/$pid/statm" "$dst/statm"
	copy "/proc/$pid/status" "$dst/status"
	for task in /proc/"$pid"/task/*; do
		copy "$task/children" "$dst/task/$(basename "$task")/children"
	done
}

tree() { # tree PID: the pid and its descendants
	local pid=$1 child
	echo "$pid"
	for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
		tree "$child"
	done
}

snap() {
	local dir=$out/$1 pid
	rm -rf "$dir"
	mkdir -p "$dir/proc" "$dir/etc"
	date +%s%N >"$dir/time"
	for f in stat diskstats uptime loadavg meminfo cpuinfo pressure/cpu pressure/io pressure/memory sys/kernel/osrelease sys/kernel/hostname; do
		copy "/proc/$f" "$dir/proc/$f"
	done
	copy /etc/os-release "$dir/etc/os-release"
	for pid in $(tree "$server"); do
		copyproc "$pid" "$dir/proc/$pid"
	done
	copyproc "$writer" "$dir/proc/self"
}

snap t0
sleep 1
snap t1
echo "$server" >"$out/server-pid"
echo "captured into $out (server pid $server)"
