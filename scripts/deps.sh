#!/usr/bin/env bash
# Installs what dbio needs on Debian 12, only when it is missing.
#   scripts/deps.sh run      Go toolchain, C compiler (cgo for SQLite), fio
#   scripts/deps.sh bench    the above plus PostgreSQL and MariaDB server binaries
#   scripts/deps.sh studies  the same as bench (make studies runs the examples)
#   scripts/deps.sh screenshot  the run dependencies plus Chromium (make screenshot)
#   scripts/deps.sh fuzz     the run dependencies (make fuzz: the parsers need nothing more)
#   scripts/deps.sh test     the same servers, plus what the multi-host tests run
#                            inside network namespaces (iproute2, openssh-server,
#                            the node exporter), Chromium and sysbench
# Prints the Go binary to use on its last line.
set -euo pipefail

need_go="1.25"
toolchain=go1.26.8
apt_updated=""

apt_install() {
	if [ "$(id -u)" != 0 ]; then
		echo "dbio: missing $*; install with: sudo apt-get install -y $*" >&2
		exit 1
	fi
	if [ -z "$apt_updated" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		apt_updated=1
	fi
	# Packages that start services on install must not touch the machine's own
	# servers; policy-rc.d stops both invoke-rc.d (SysV) and deb-systemd-invoke
	# (systemd) from starting them.
	local policy=/usr/sbin/policy-rc.d created=""
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
	[ -n "$created" ] && rm -f "$policy"
	return 0
}

find_go() {
	for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go/bin/go; do
		[ -n "$g" ] && [ -x "$g" ] && { echo "$g"; return 0; }
	done
	return 1
}

go_new_enough() { # go_new_enough GO
	local have
	have=$("$1" env GOVERSION 2>/dev/null | sed 's/^go//') || return 1
	[ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need_go" "$have" | sort -V | head -1)" = "$need_go" ]
}

# Debian 12's own Go (1.19) is too old for dbio's dependencies, so a missing
# or old Go is replaced by the official toolchain, fetched as the module the
# Go module proxy serves for it.
install_go_toolchain() {
	local dir=/usr/local/lib/dbio-go/$toolchain
	if [ ! -x "$dir/bin/go" ]; then
		command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates
		command -v unzip >/dev/null 2>&1 || apt_install unzip
		local proxy=${GOPROXY:-https://proxy.golang.org}
		proxy=${proxy%%,*}
		local tmp
		tmp=$(mktemp -d)
		echo "dbio: installing Go $toolchain from the Go module proxy" >&2
		curl -fsSL "$proxy/golang.org/toolchain/@v/v0.0.1-$toolchain.linux-amd64.zip" -o "$tmp/go.zip"
		unzip -q "$tmp/go.zip" -d "$tmp"
		mkdir -p "$(dirname "$dir")"
		mv "$tmp/golang.org/toolchain@v0.0.1-$toolchain.linux-amd64" "$dir"
		chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/* 2>/dev/null || true
		rm -rf "$tmp"
	fi
	echo "$dir/bin/go"
}

ensure_go() {
	local go
	if go=$(find_go) && go_new_enough "$go"; then
		echo "$go"
		return
	fi
	install_go_toolchain
}

ensure_cmd() { # ensure_cmd COMMAND PACKAGE...
	local cmd=$1
	shift
	command -v "$cmd" >/dev/null 2>&1 || apt_install "$@"
}

ensure_postgres() {
	if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
		apt_install postgresql
	fi
}

# The multi-host tests run sshd and the node exporter themselves, inside the
# network namespaces they create. Installing the packages must not leave their
# system services listening on this machine (port 22, and 9100 on every
# address), now or after a reboot: policy-rc.d keeps them from starting, and
# they are stopped and disabled here (update-rc.d also removes the systemd
# links the postinst made), which is safe because the package was missing, so
# no one relied on its service.
ensure_test_daemon() { # ensure_test_daemon PROGRAM PACKAGE SERVICE...
	local program=$1 package=$2 service
	shift 2
	[ -x "$program" ] && return 0
	apt_install "$package"
	for service in "$@"; do
		if [ -d /run/systemd/system ]; then
			systemctl disable --now "$service" >/dev/null 2>&1 || true
		elif [ -x "/etc/init.d/$service" ]; then
			"/etc/init.d/$service" stop >/dev/null 2>&1 || true
			update-rc.d "$service" disable >/dev/null 2>&1 || true
		fi
	done
}

ensure_mariadb() {
	if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ] && [ ! -x /usr/sbin/mysqld ]; then
		apt_install mariadb-server mariadb-backup
	fi
	# Backup tests need it even where the server was installed alone.
	command -v mariadb-backup >/dev/null 2>&1 || command -v mariabackup >/dev/null 2>&1 || apt_install mariadb-backup
}

mode=${1:-run}
ensure_cmd gcc gcc libc6-dev
ensure_cmd fio fio
if [ "$mode" = test ] || [ "$mode" = bench ] || [ "$mode" = studies ]; then
	ensure_postgres
	ensure_mariadb
fi
if [ "$mode" = test ] || [ "$mode" = screenshot ]; then
	# The report's test opens the HTML in headless Chromium, and make
	# screenshot renders the README's picture with it.
	ensure_cmd chromium chromium
fi
if [ "$mode" = test ]; then
	# The sysbench workload's test cross-checks dbio against Debian's sysbench.
	ensure_cmd sysbench sysbench
	# The multi-host test foundation (internal/testhosts) builds hosts out of
	# network namespaces, each with its own sshd, fio server and node exporter.
	ensure_cmd ip iproute2
	ensure_test_daemon /usr/sbin/sshd openssh-server ssh ssh.socket
	ensure_test_daemon /usr/bin/prometheus-node-exporter prometheus-node-exporter prometheus-node-exporter
fi
ensure_go
