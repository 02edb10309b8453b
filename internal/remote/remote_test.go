package remote

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fleet"
	"dbio/internal/testfleet"
)

func fleetHost(f *testfleet.Fleet, i int) fleet.Host {
	h := f.Hosts[i]
	return fleet.Host{Name: h.Name, Destination: h.Name, SSHConfig: f.SSHConfig}
}

// TestInstallCopiesOnlyWhatDiffers copies a program to a host, finds it
// there the second time, and copies again a build that differs.
func TestInstallCopiesOnlyWhatDiffers(t *testing.T) {
	f := testfleet.Start(t, 1)
	ctx := t.Context()
	shell := Shell{fleet.Shell{Exec: execx.Real{}}}
	h := fleetHost(f, 0)
	prog := filepath.Join(t.TempDir(), "dbio")
	write := func(body string) Binary {
		if err := os.WriteFile(prog, []byte("#!/bin/sh\necho "+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := ReadBinary(prog)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		body   string
		copied bool
	}{{"one", true}, {"one", false}, {"two", true}} {
		b := write(c.body)
		got, err := shell.Install(ctx, h, b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Copied != c.copied {
			t.Errorf("build %q: copied=%v, want %v", c.body, got.Copied, c.copied)
		}
		if !strings.HasPrefix(got.Path, f.Hosts[0].Home+"/.dbio/bin/dbio-") {
			t.Errorf("installed at %s, want in dbio's directory of the host's home %s", got.Path, f.Hosts[0].Home)
		}
		out, err := f.Hosts[0].SSH(ctx, got.Path).Output()
		if err != nil || strings.TrimSpace(string(out)) != c.body {
			t.Errorf("the host's copy says %q (%v), want %q", out, err, c.body)
		}
	}
}

// TestTenantBarrierOverSSH runs a stand-in tenant on two hosts (a shell
// script speaking the barrier's lines), releases both at one instant
// before each of two steps, and stops them: nothing is left on the hosts.
func TestTenantBarrierOverSSH(t *testing.T) {
	f := testfleet.Start(t, 2)
	ctx := t.Context()
	shell := Shell{fleet.Shell{Exec: execx.Real{}}}
	// Before each step, ready, then the instant read back as started;
	// then wait for the input's end as dbio does.
	step := `echo "` + readyLine + `"; read l; echo "` + startedPrefix + `${l#start?}"; `
	script := `echo "loading"; ` + step + `echo "step 1 done"; ` + step + `cat >/dev/null`
	var out bytes.Buffer
	var tenants []*Tenant
	for i := range f.Hosts {
		tn, err := shell.Start(ctx, fleetHost(f, i), "sh", []string{"-c", script}, &lockedWriter{w: &out})
		if err != nil {
			t.Fatal(err)
		}
		tenants = append(tenants, tn)
	}
	for k := range 2 {
		for _, tn := range tenants {
			select {
			case <-tn.Ready(k):
			case <-tn.Ended():
				t.Fatalf("%s ended before ready for step %d: %v", tn.Host.Name, k, tn.Err())
			}
		}
		at := time.Now().Add(time.Duration(k+1) * time.Second)
		for _, tn := range tenants {
			if err := tn.Release(at); err != nil {
				t.Fatal(err)
			}
		}
		for _, tn := range tenants {
			select {
			case <-tn.Started(k):
			case <-tn.Ended():
				t.Fatalf("%s ended before it started step %d: %v", tn.Host.Name, k, tn.Err())
			}
			if !tn.StartedAt(k).Equal(at) {
				t.Errorf("%s started step %d at %v, want %v", tn.Host.Name, k, tn.StartedAt(k), at)
			}
		}
	}
	for _, tn := range tenants {
		tn.Stop()
		if err := tn.Err(); err != nil {
			t.Errorf("%s: %v", tn.Host.Name, err)
		}
	}
	if got := out.String(); !strings.Contains(got, "h1: loading") || !strings.Contains(got, "h2: loading") || strings.Contains(got, "dbio-barrier") {
		t.Errorf("the tenants' output, prefixed, without the barrier's lines:\n%s", got)
	}
	f.WaitNoStrays(t)
}

// TestResultsComeBack makes a tenant's results directory on a host, brings
// it back through tar and removes it; a directory that exists already is
// not taken for one dbio made.
func TestResultsComeBack(t *testing.T) {
	f := testfleet.Start(t, 1)
	ctx := t.Context()
	shell := Shell{fleet.Shell{Exec: execx.Real{}}}
	h := fleetHost(f, 0)
	d, err := shell.MakeResultsDir(ctx, h, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shell.MakeResultsDir(ctx, h, "run-1"); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("a second directory of the same name: %v, want a refusal", err)
	}
	// The hosts share this machine's files: write what a tenant would.
	if err := os.MkdirAll(filepath.Join(d.Path, "20261127-tpcc", "steps", "00-users-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Path, "20261127-tpcc", "run.json"), []byte(`{"status":"completed"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "h1")
	got, err := shell.Fetch(ctx, d, local)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(local, "20261127-tpcc", "run.json")); err != nil || string(b) != `{"status":"completed"}` || got.Files != 1 {
		t.Errorf("run.json came back as %q (%v), %d files", b, err, got.Files)
	}
	if err := shell.Remove(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.Path); !os.IsNotExist(err) {
		t.Errorf("%s still there after Remove: %v", d.Path, err)
	}
	if _, err := os.Stat(filepath.Dir(d.Path)); err != nil {
		t.Errorf("dbio's runs directory went too: %v", err)
	}
}

// TestFetchRefusesMoreThanAHostCouldHold: a host whose results directory
// counts more than dbio brings back from a host (here a 50 GB sparse file,
// which tar would send as 50 GB of zeros) is refused before anything is
// sent, naming the count; nothing is made here, and the host keeps its
// directory for the user to look at.
func TestFetchRefusesMoreThanAHostCouldHold(t *testing.T) {
	f := testfleet.Start(t, 1)
	ctx := t.Context()
	shell := Shell{fleet.Shell{Exec: execx.Real{}}}
	d, err := shell.MakeResultsDir(ctx, fleetHost(f, 0), "huge")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Path, "zeros"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(d.Path, "zeros"), 50<<30); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "h1")
	_, err = shell.Fetch(ctx, d, local)
	if err == nil || !strings.Contains(err.Error(), "the host counts 51200.0 MiB in 2 entries there, more than dbio brings back from a host") {
		t.Fatalf("err = %v, want the host's count refused", err)
	}
	if _, err := os.Lstat(local); !os.IsNotExist(err) {
		t.Errorf("%s is left behind (%v)", local, err)
	}
	if _, err := os.Stat(filepath.Join(d.Path, "zeros")); err != nil {
		t.Errorf("the host's results went: %v", err)
	}
	if err := shell.Remove(ctx, d); err != nil {
		t.Fatal(err)
	}
}

// lockedWriter serializes the writes of several tenants' output.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestRemoveLeavesLinks: a results directory that a symbolic link has
// replaced since dbio made it, or that now lies behind one (dbio's runs/
// made a link), is neither removed nor read through the link: the link and
// what it points to stay as they are, and the error names the link.
func TestRemoveLeavesLinks(t *testing.T) {
	f := testfleet.Start(t, 1)
	ctx := t.Context()
	shell := Shell{fleet.Shell{Exec: execx.Real{}}}
	h := fleetHost(f, 0)
	cases := []struct {
		name string
		// spoil puts a link where dbio made d, pointing into outside, and
		// returns the link.
		spoil func(t *testing.T, d ResultsDir, outside string) string
	}{
		{"the directory is a link", func(t *testing.T, d ResultsDir, outside string) string {
			if err := os.Remove(d.Path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, filepath.Base(d.Path)), d.Path); err != nil {
				t.Fatal(err)
			}
			return d.Path
		}},
		{"runs is a link", func(t *testing.T, d ResultsDir, outside string) string {
			runs := filepath.Dir(d.Path)
			if err := os.Rename(runs, runs+".moved"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				os.Remove(runs)
				os.Rename(runs+".moved", runs)
			})
			if err := os.Symlink(outside, runs); err != nil {
				t.Fatal(err)
			}
			return runs
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := shell.MakeResultsDir(ctx, h, fmt.Sprintf("linked-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			// What the link leads to: a directory of the same name, with a
			// file, that dbio did not make.
			outside := t.TempDir()
			theirs := filepath.Join(outside, filepath.Base(d.Path), "theirs")
			if err := os.MkdirAll(filepath.Dir(theirs), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(theirs, []byte("not dbio's"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := c.spoil(t, d, outside)
			if _, err := shell.Fetch(ctx, d, t.TempDir()); !errors.Is(err, ErrNotOwn) || !strings.Contains(err.Error(), link+" is a symbolic link") {
				t.Errorf("Fetch through the link: %v, want a refusal naming %s", err, link)
			}
			err = shell.Remove(ctx, d)
			if !errors.Is(err, ErrNotOwn) || !strings.Contains(err.Error(), link+" is a symbolic link") {
				t.Errorf("Remove through the link: %v, want a refusal naming %s", err, link)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link %s is not left as it was: %v", link, err)
			}
			// A run made now would be behind the link, which it refuses
			// before it starts, not once it has run.
			if link == filepath.Dir(d.Path) {
				next := fmt.Sprintf("linked-%d-next", i)
				if _, err := shell.MakeResultsDir(ctx, h, next); !errors.Is(err, ErrNotOwn) || !strings.Contains(err.Error(), link+" is a symbolic link") {
					t.Errorf("MakeResultsDir behind the link: %v, want a refusal naming %s", err, link)
				}
				if _, err := os.Lstat(filepath.Join(outside, next)); err == nil {
					t.Errorf("MakeResultsDir made %s through the link", next)
				}
			}
			if _, err := os.Stat(theirs); err != nil {
				t.Errorf("what the link points to went: %v", err)
			}
		})
	}
}
