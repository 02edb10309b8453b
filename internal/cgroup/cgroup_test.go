package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/testenv"
)

// Find reads only the sysfs root it is given, and tells a v1 hierarchy by
// its controller's own file and a v2 one by the controllers it lists.
func TestFind(t *testing.T) {
	for _, tt := range []struct {
		name   string
		files  map[string]string // path under the root -> content
		v1, v2 string            // under the root, "" for none
	}{
		{"none", nil, "", ""},
		{"v1 memory", map[string]string{"fs/cgroup/memory/memory.limit_in_bytes": ""}, "fs/cgroup/memory", ""},
		{"v1 directory without the controller's file", map[string]string{"fs/cgroup/memory/tasks": ""}, "", ""},
		{"v2 with memory", map[string]string{"fs/cgroup/cgroup.controllers": "cpu io memory\n"}, "", "fs/cgroup"},
		{"v2 without memory", map[string]string{"fs/cgroup/cgroup.controllers": "cpu io\n"}, "", ""},
		{"word, not substring", map[string]string{"fs/cgroup/cgroup.controllers": "memoryx\n"}, "", ""},
		{"hybrid unified", map[string]string{"fs/cgroup/unified/cgroup.controllers": "memory\n"}, "", "fs/cgroup/unified"},
		{"both", map[string]string{"fs/cgroup/memory/memory.limit_in_bytes": "", "fs/cgroup/unified/cgroup.controllers": "memory\n"},
			"fs/cgroup/memory", "fs/cgroup/unified"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tt.files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			under := func(p string) string {
				if p == "" {
					return ""
				}
				return filepath.Join(root, p)
			}
			v1, v2 := Find(root, "memory", "memory.limit_in_bytes", "memory")
			if v1 != under(tt.v1) || v2 != under(tt.v2) {
				t.Errorf("Find = %q, %q; want %q, %q", v1, v2, under(tt.v1), under(tt.v2))
			}
		})
	}
	if v1, v2 := Find("", "memory", "memory.limit_in_bytes", "memory"); v1 != "" || v2 != "" {
		t.Errorf("Find without a root = %q, %q; want nothing", v1, v2)
	}
}

func TestNameEndsWithItsMaker(t *testing.T) {
	for _, tt := range []struct {
		dir  string
		want int
	}{
		{Name("io", "20261125-190000-tpcc", 4242), 4242},
		{Name("mem", "run x/y", 7), 7},
		{"dbio-io-run", 0},       // no PID
		{"dbio-io-run-0", 0},     // not a process
		{"system.slice-12", 0},   // not dbio's
		{"dbio-20261125-99", 99}, // the names before kinds were added
	} {
		if got := Owner(tt.dir); got != tt.want {
			t.Errorf("Owner(%q) = %d, want %d", tt.dir, got, tt.want)
		}
	}
	if n := Name("mem", "run x/y", 7); n != "dbio-mem-run-x-y-7" {
		t.Errorf("Name = %q: a name outside [A-Za-z0-9_-] must become '-'", n)
	}
}

// On the host's real hierarchies: a group whose dbio is gone and which
// holds no process is swept; one whose dbio runs (this test), one still
// holding a process (a server outliving its killed dbio), and a group that
// is not dbio's all stay.
func TestSweepRemovesOnlyWhatAGoneDbioLeft(t *testing.T) {
	v1, v2 := Find("/sys", "memory", "memory.limit_in_bytes", "memory")
	root := v1
	if root == "" {
		root = v2
	}
	testenv.Require(t, os.Geteuid() == 0 && root != "", "root and memory cgroups", testenv.HowRootAndMemcg)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// A process that outlives the gone dbio, in the group it left.
	server := exec.Command("sleep", "600")
	dead := filepath.Join(root, Name("sweeptest", t.Name(), gone.Process.Pid))
	held := filepath.Join(root, Name("sweeptest-held", t.Name(), gone.Process.Pid))
	alive := filepath.Join(root, Name("sweeptest", t.Name(), os.Getpid()))
	foreign := filepath.Join(root, "sweeptest-not-dbio-"+strconv.Itoa(gone.Process.Pid))
	for _, d := range []string{dead, held, alive, foreign} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Remove(d) })
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	if err := AddPID(held, server.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// Other dbio processes on the machine may have left groups of their
	// own: only this test's are looked at.
	removed := Sweep("", root)
	if !slices.Contains(removed, dead) || Exists(dead) {
		t.Errorf("Sweep removed %v, not %s", removed, dead)
	}
	for _, d := range []string{held, alive, foreign} {
		if slices.Contains(removed, d) || !Exists(d) {
			t.Errorf("Sweep removed %s", d)
		}
	}
	// Once the process ends (and is reaped), its group goes too.
	server.Process.Kill()
	server.Wait()
	if removed := Sweep(root); !slices.Contains(removed, held) {
		t.Errorf("after its process ended, Sweep removed %v, not %s", removed, held)
	}
}

func TestParsePressure(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Pressure
		err      string
	}{
		{"a group's io.pressure", "some avg10=1.53 avg60=0.94 avg300=0.27 total=3390317\nfull avg10=1.37 avg60=0.85 avg300=0.24 total=3111455\n",
			Pressure{Some: 3390317, Full: 3111455}, ""},
		{"some only", "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n", Pressure{Some: 42}, ""},
		{"no total", "some avg10=0.00 avg60=0.00 avg300=0.00\n", Pressure{}, `no "some" line`},
		{"empty", "", Pressure{}, `no "some" line`},
		{"bad total", "some avg10=0.00 total=x\n", Pressure{}, "some total"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePressure(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
