package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"dbio/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// snapFS points at one captured snapshot (see testdata/capture.sh).
func snapFS(name string) FS {
	dir := filepath.Join("testdata", "snap", name)
	return FS{Proc: filepath.Join(dir, "proc"), Etc: filepath.Join(dir, "etc")}
}

// snapInt reads a number recorded by capture.sh.
func snapInt(t *testing.T, rel string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "snap", rel))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sequenceCounters is a fake engine returning one map per call; pure logic,
// so a fake is the right tool here.
type sequenceCounters struct {
	maps []map[string]float64
	errs []error
	n    int
}

func (c *sequenceCounters) Stats(ctx context.Context) (map[string]float64, error) {
	i := c.n
	c.n++
	if i < len(c.errs) && c.errs[i] != nil {
		return nil, c.errs[i]
	}
	if i >= len(c.maps) {
		i = len(c.maps) - 1
	}
	return c.maps[i], nil
}

// TestSampleSnapshots runs the sampler over the two captured snapshots and
// compares the points and the step summary with golden files.
func TestSampleSnapshots(t *testing.T) {
	server := int(snapInt(t, "server-pid"))
	t0 := time.Unix(0, snapInt(t, "t0/time"))
	t1 := time.Unix(0, snapInt(t, "t1/time"))
	engine := &sequenceCounters{maps: []map[string]float64{
		{"blks_hit": 1000, "blks_read": 10, "xact_commit": 5},
		{"blks_hit": 3520, "blks_read": 73, "xact_commit": 131},
	}}
	s, err := New(Options{
		FS:             snapFS("t0"),
		Devices:        []string{"/dev/vda"},
		ServerPIDs:     func() []int { return []int{server} },
		ServerChildren: true,
		Counters:       engine,
		PageSize:       4096,
	})
	if err != nil {
		t.Fatal(err)
	}
	if pts := s.Sample(t0); pts != nil {
		t.Fatalf("the first sample is a baseline and returns nothing, got %v", pts)
	}
	s.fs = snapFS("t1")
	pts := s.Sample(t1)

	var b bytes.Buffer
	var cpuSum float64
	got := map[string]float64{}
	for _, p := range pts {
		got[p.Name] = p.Value
		if strings.HasPrefix(p.Name, "cpu_") && p.Name != results.MetricOtherCPU {
			cpuSum += p.Value
		}
		if p.Name == "telemetry_cost_pct" {
			if p.Value < 0 || p.Value > 100 {
				t.Errorf("telemetry_cost_pct = %v", p.Value)
			}
			continue // depends on this machine, not on the snapshot
		}
		fmt.Fprintf(&b, "%-28s %.6g\n", p.Name, p.Value)
	}
	if math.Abs(cpuSum-100) > 1e-9 {
		t.Errorf("CPU shares add up to %v, want 100", cpuSum)
	}
	// Other processes' CPU is what neither dbio nor the server used of the
	// busy CPUs.
	other := 100 - got["cpu_idle_pct"] - got["cpu_iowait_pct"] - got["cpu_steal_pct"] - got["proc_dbio_cpu_pct"] - got["proc_server_cpu_pct"]
	if o, ok := got[results.MetricOtherCPU]; !ok || math.Abs(o-other) > 1e-9 || o <= 0 {
		t.Errorf("%s = %v (present %v), want %v", results.MetricOtherCPU, o, ok, other)
	}
	golden(t, "sample.golden", b.Bytes())

	sum := s.StepSummary()
	delete(sum.Metrics, "telemetry_cost_pct")
	delete(sum.Verdict.Evidence, "telemetry_cost_pct")
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden.json", append(js, '\n'))
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestNewRejectsUnknownDevice(t *testing.T) {
	_, err := New(Options{FS: snapFS("t0"), Devices: []string{"sdz"}})
	checkErr(t, err, `block device "sdz" is not in testdata/snap/t0/proc/diskstats: pass a kernel device name (one of vda, zram0) or a major:minor number`)

	s, err := New(Options{FS: snapFS("t0"), Devices: []string{"254:0", "vda"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.devices) != 1 || s.devices[0].name != "vda" {
		t.Errorf("254:0 and vda are one device, got %+v", s.devices)
	}

	_, err = New(Options{FS: FS{Proc: t.TempDir()}})
	checkErr(t, err, "a procfs mount?")
	_, err = New(Options{})
	checkErr(t, err, "pass telemetry.HostFS()")
}

func TestSampleKeepsBaselineWhenTimeDoesNotAdvance(t *testing.T) {
	s, err := New(Options{FS: snapFS("t0")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	s.Sample(now)
	if pts := s.Sample(now); pts != nil {
		t.Errorf("a sample at the same time returned %v", pts)
	}
	if pts := s.Sample(now.Add(time.Second)); len(pts) == 0 {
		t.Error("the next sample returned nothing")
	}
}

// TestCounterErrorsBecomeWarnings checks that an engine that fails to answer
// costs its own points only, and is reported in the step summary.
func TestCounterErrorsBecomeWarnings(t *testing.T) {
	engine := &sequenceCounters{
		maps: []map[string]float64{{"reads": 1}, {"reads": 1}, {"reads": 3}},
		errs: []error{nil, errors.New("connection refused"), nil},
	}
	s, err := New(Options{FS: snapFS("t0"), Counters: engine})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	s.Sample(now)
	if hasPoint(s.Sample(now.Add(time.Second)), "engine_reads_per_s") {
		t.Error("engine rate without engine counters")
	}
	pts := s.Sample(now.Add(2 * time.Second))
	if hasPoint(pts, "engine_reads_per_s") {
		t.Error("engine rate without a baseline after a failure")
	}
	sum := s.StepSummary()
	want := []string{"read engine counters failed once, last: connection refused"}
	if strings.Join(sum.Warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", sum.Warnings, want)
	}
	if sum.Samples != 2 {
		t.Errorf("samples = %d, want 2", sum.Samples)
	}
	s.StartStep()
	if sum := s.StepSummary(); sum.Samples != 0 || len(sum.Warnings) != 0 || len(sum.Metrics) != 0 {
		t.Errorf("after StartStep: %+v", sum)
	}
}

func hasPoint(pts []Point, name string) bool {
	for _, p := range pts {
		if p.Name == name {
			return true
		}
	}
	return false
}

// TestConcurrentUse runs Sample, StartStep and StepSummary from different
// goroutines, as the runner does; run with -race.
func TestConcurrentUse(t *testing.T) {
	s, err := New(Options{FS: snapFS("t0"), Devices: []string{"vda"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		now := time.Unix(1000, 0)
		for i := range 50 {
			s.Sample(now.Add(time.Duration(i) * time.Second))
		}
	}()
	for range 50 {
		s.StepSummary()
		s.StartStep()
		s.Cost()
	}
	<-done
}

// The memory group is read on every sample through the function given; a
// failed read leaves the group out of that second and says so in the
// step's warnings.
func TestMemoryGroupSampled(t *testing.T) {
	reads := []MemoryGroup{{Limit: 1e9, Usage: 2e8, Refaults: 10}, {}, {Limit: 1e9, Usage: 3e8, Refaults: 70}}
	n := 0
	s, err := New(Options{FS: snapFS("t0"), MemoryGroup: func() (MemoryGroup, error) {
		i := n
		n++
		if i == 1 {
			return MemoryGroup{}, errors.New("no such file")
		}
		return reads[min(i, len(reads)-1)], nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	s.Sample(now)
	if pts := s.Sample(now.Add(time.Second)); hasPoint(pts, "memcg_usage_mb") {
		t.Error("a memory group level from a failed read")
	}
	pts := pointMap(s.Sample(now.Add(2 * time.Second)))
	if pts["memcg_usage_mb"] != 300 || pts["memcg_limit_mb"] != 1000 {
		t.Errorf("levels %v, want usage 300 MB of 1000", pts)
	}
	if _, ok := pts["memcg_refaults_per_s"]; ok {
		t.Error("a rate across a failed read")
	}
	want := "read the server's memory cgroup failed once, last: no such file"
	if w := s.StepSummary().Warnings; len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want %q", w, want)
	}
}
