package runner

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/execx"
	"dbio/internal/memlimit"
	"dbio/internal/telemetry"
	"dbio/internal/testenv"
)

// A server capped with --server-memory is sampled through the group the run
// holds: a program started through the run's wrapper reads a file of three
// times the cap through the page cache, twice, and the per-second samples
// show the group's usage rising to the cap and staying under it, the page
// cache making it up, and the cap binding (pages read back after being
// evicted). Once the run releases the group, nothing is left.
func TestServerMemoryGroupSampledWhileHeld(t *testing.T) {
	host := memlimit.SystemHost("/sys")
	testenv.Require(t, os.Geteuid() == 0 && host.Available() == nil, "root and memory cgroups", testenv.HowRootAndMemcg)
	const limit = 48 << 20
	opts := engine.Options{ServerMemory: limit}
	var env Env
	release, record, _, err := cappedMemory(host, "sampling-"+t.Name(), &opts, &env)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			release()
		}
	})
	if env.memoryGroup == nil {
		t.Fatal("the run holds a memory group but its samplers get no way to read it")
	}
	s, err := telemetry.New(telemetry.Options{FS: telemetry.HostFS(), MemoryGroup: env.memoryGroup})
	if err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(t.TempDir(), "data")
	size := 3 * limit
	if err := exec.Command("dd", "if=/dev/zero", "of="+file, "bs=1M", "count="+strconv.Itoa(size>>20), "status=none").Run(); err != nil {
		t.Fatal(err)
	}
	// The page cache may still hold the file from writing it, outside the
	// group: drop it, so that the program's reads are charged to the group.
	if err := exec.Command("dd", "of="+file, "oflag=nocache", "conv=notrunc,fdatasync", "count=0", "status=none").Run(); err != nil {
		t.Fatal(err)
	}
	// The program reads the file twice, 4 MB at a time, and prints a line
	// after each read: the test samples on each line, with a clock of its
	// own, so the samples follow the reads rather than wall time.
	script := `for pass in 1 2; do i=0; while [ $i -lt "$1" ]; do dd if="$0" of=/dev/null bs=4M count=1 skip=$i status=none || exit 1; echo $i; i=$((i+1)); done; done`
	c := opts.Wrap(execx.Cmd{Name: "/bin/sh", Args: []string{"-c", script, file, strconv.Itoa(size / (4 << 20))}})
	cmd := exec.Command(c.Name, c.Args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1e9, 0)
	s.Sample(clock)
	var rows []map[string]float64
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		clock = clock.Add(time.Second)
		row := map[string]float64{}
		for _, p := range s.Sample(clock) {
			row[p.Name] = p.Value
		}
		rows = append(rows, row)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the reading program: %v", err)
	}
	var peak, cache, hits, refaults float64
	for _, r := range rows {
		if r["memcg_limit_mb"] != float64(limit)/1e6 {
			t.Fatalf("a sample without the cap of %d bytes: %v", limit, r)
		}
		if r["memcg_usage_mb"] > float64(limit+memlimit.ForcedCharge)/1e6 {
			t.Errorf("usage %.1f MB over the cap of %.1f MB", r["memcg_usage_mb"], float64(limit)/1e6)
		}
		peak, cache = max(peak, r["memcg_usage_mb"]), max(cache, r["memcg_cache_mb"])
		hits += r["memcg_limit_hits_per_s"]
		refaults += r["memcg_refaults_per_s"]
	}
	t.Logf("%d samples over %d MB read twice under a %d MB cap: peak usage %.1f MB, page cache up to %.1f MB, %.0f cap hits, %.0f refaults",
		len(rows), size>>20, limit>>20, peak, cache, hits, refaults)
	if len(rows) < 2*size/(4<<20) {
		t.Fatalf("%d samples for %d reads", len(rows), 2*size/(4<<20))
	}
	if peak < 0.75*float64(limit)/1e6 {
		t.Errorf("peak usage %.1f MB: reading three times the cap should fill the group to its %d MB", peak, limit>>20)
	}
	if cache < 0.5*float64(limit)/1e6 {
		t.Errorf("page cache at most %.1f MB: the reads' cache should make up the group's usage", cache)
	}
	// Reading the file a second time reads back every page the cap
	// evicted. (Cap hits are not asserted: a v1 kernel that accounts
	// swap, as this one may, charges the memory-plus-swap counter first
	// and may keep no count of its failures.)
	if refaults < float64(size/os.Getpagesize()/2) {
		t.Errorf("%.0f refaults after reading %d pages twice under a cap of a third of them: the evictions the cap forces are not counted", refaults, size/os.Getpagesize())
	}
	if sum := s.StepSummary(); sum.Metrics["memcg_usage_mb"].Samples != len(rows) {
		t.Errorf("the step summary has %d samples of the usage, want %d", sum.Metrics["memcg_usage_mb"].Samples, len(rows))
	}
	if record == nil || record.Group == "" {
		t.Fatalf("no group recorded: %+v", record)
	}
	released = true
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(record.Group); !os.IsNotExist(err) {
		t.Errorf("the group %s outlived its release", record.Group)
	}
}
