package testfleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Process is a process running on one of a fleet's hosts.
type Process struct {
	Host    string
	PID     int
	Command string
}

func (p Process) String() string { return fmt.Sprintf("%s: pid %d: %s", p.Host, p.PID, p.Command) }

// Strays are the processes running on the fleet's hosts other than the
// fleet's own daemons (sshd, fio server and node exporter themselves, not
// what they forked): what a test's programs started on the hosts, over SSH
// or through a fio server, and left running. A test that must leave no
// process behind on its hosts waits until this is empty.
func (f *Fleet) Strays(ctx context.Context) ([]Process, error) {
	daemons := map[int]bool{}
	for _, d := range f.daemons {
		if d != nil {
			daemons[d.cmd.Process.Pid] = true
		}
	}
	ip := ipTool(f.tools.ip)
	var out []Process
	for _, h := range f.Hosts {
		pids, err := ip.pids(ctx, h.Namespace)
		if err != nil {
			return nil, fmt.Errorf("processes of %s: %w", h.Name, err)
		}
		for _, pid := range pids {
			if daemons[pid] {
				continue
			}
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err != nil {
				continue // it ended since it was listed
			}
			out = append(out, Process{Host: h.Name, PID: pid, Command: strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))})
		}
	}
	return out, nil
}

// WaitNoStrays waits until Strays is empty, failing t after a minute: a
// loaded machine ends ssh sessions, and what they ran, slowly.
func (f *Fleet) WaitNoStrays(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		strays, err := f.Strays(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(strays) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left on the hosts: %v", strays)
		}
		time.Sleep(50 * time.Millisecond) // polling the hosts' process lists
	}
}
