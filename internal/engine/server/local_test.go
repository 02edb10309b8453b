package server

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestListenerPID finds the process listening at an address on this host,
// over TCP and on a Unix socket, as it finds a user's server: here, the
// test itself; and none where nothing listens or the host is not this one.
func TestListenerPID(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "server.sock")
	unix, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	_, port, _ := net.SplitHostPort(tcp.Addr().String())
	tests := map[string]int{
		tcp.Addr().String():       os.Getpid(),
		"localhost:" + port:       os.Getpid(),
		sock:                      os.Getpid(),
		closedAddr:                0,
		"192.0.2.1:" + port:       0, // TEST-NET-1: never this host
		filepath.Join(sock, "no"): 0,
	}
	for where, want := range tests {
		if got := listenerPID("/proc", where); got != want {
			t.Errorf("listenerPID(%q) = %d, want %d", where, got, want)
		}
	}
}
