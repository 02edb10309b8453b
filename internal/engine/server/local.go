package server

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Local is how an engine finds its existing server (--dsn) among this
// host's processes and files: the names its server's process goes by, and
// the queries that ask the server where its data and its log are (each
// returning one path; "" or an error when the user may not ask).
type Local struct {
	Commands      []string
	DataDirQuery  string
	LogDirQuery   string
	ResolveLogDir func(data, log string) string
}

// FindLocal looks for the existing server the instance is connected to at
// where (host:port, or a socket's path) on this host: the process listening
// there, if it goes by one of l.Commands, and the data and log directories
// the server names. A server on another host, or one dbio may not see
// (another network namespace, a container), is left unknown: its processes
// are then none, its directories "".
func (in *Instance) FindLocal(ctx context.Context, procRoot, where string, l Local) {
	pid := listenerPID(procRoot, where)
	if pid == 0 {
		return
	}
	comm, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "comm"))
	if err != nil || !slices.Contains(l.Commands, strings.TrimSpace(string(comm))) {
		return
	}
	in.procRoot, in.externalPID = procRoot, pid
	in.dataDir = queryPath(ctx, in.StatsDB(), l.DataDirQuery)
	if in.dataDir == "" {
		return
	}
	if l.LogDirQuery != "" {
		in.logDir = queryPath(ctx, in.StatsDB(), l.LogDirQuery)
	}
	if l.ResolveLogDir != nil {
		in.logDir = l.ResolveLogDir(in.dataDir, in.logDir)
	}
}

// ServerDirs implements engine.ServerPlaces: the data and log directories
// of an existing server found on this host ("" when not found).
func (in *Instance) ServerDirs() (data, log string) { return in.dataDir, in.logDir }

func queryPath(ctx context.Context, db *sql.DB, q string) string {
	var p sql.NullString
	if q == "" || db.QueryRowContext(ctx, q).Scan(&p) != nil || !filepath.IsAbs(p.String) {
		return ""
	}
	return filepath.Clean(p.String)
}

// listenerPID is the process on this host listening at where: a TCP
// host:port whose host is this machine's, or a Unix socket's path; 0 when
// none is found.
func listenerPID(procRoot, where string) int {
	var inodes []string
	if strings.HasPrefix(where, "/") {
		inodes = unixListeners(procRoot, where)
	} else {
		host, port, err := net.SplitHostPort(where)
		if err != nil || !isThisHost(host) {
			return 0
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return 0
		}
		for _, table := range []string{"tcp", "tcp6"} {
			inodes = append(inodes, tcpListeners(filepath.Join(procRoot, "net", table), p)...)
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	return socketOwner(procRoot, inodes)
}

// isThisHost says whether host names this machine: loopback, or one of
// its interfaces' addresses.
func isThisHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		addrs, err := net.LookupIP(host)
		if err != nil || len(addrs) == 0 {
			return false
		}
		ip = addrs[0]
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// tcpListeners are the inodes of the sockets listening on port in a
// /proc/net/tcp table.
func tcpListeners(path string, port int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		b, err := hex.DecodeString(hexPort)
		if !ok || err != nil || len(b) != 2 || int(b[0])<<8|int(b[1]) != port {
			continue
		}
		out = append(out, fields[9])
	}
	return out
}

// unixListeners are the inodes of the Unix sockets listening at path.
func unixListeners(procRoot, path string) []string {
	f, err := os.Open(filepath.Join(procRoot, "net", "unix"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 8 && fields[7] == path && fields[3] == "00010000" { // __SO_ACCEPTCON: listening
			out = append(out, fields[6])
		}
	}
	return out
}

// socketOwner is the lowest process ID holding one of the socket inodes
// (the parent, for servers whose children inherit the socket), 0 for none.
func socketOwner(procRoot string, inodes []string) int {
	want := map[string]bool{}
	for _, i := range inodes {
		want[fmt.Sprintf("socket:[%s]", i)] = true
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return 0
	}
	owner := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || (owner != 0 && pid > owner) {
			continue
		}
		fdDir := filepath.Join(procRoot, e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && want[link] {
				owner = pid
				break
			}
		}
	}
	return owner
}
