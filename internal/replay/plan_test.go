package replay

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"dbio/internal/blocktrace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the code's output (go test -update rewrites it):\n%s", path, got)
	}
}

// twoDevices is a small trace of a database with data on one device and
// its log on another: page reads and writes, a log write with FUA, a
// flush, a discard.
func twoDevices() blocktrace.Trace {
	ms := time.Millisecond
	return blocktrace.Trace{
		Devices:   []blocktrace.Device{{Name: "sdb", Major: 8, Minor: 16}, {Name: "sdc", Major: 8, Minor: 32}},
		Processes: []string{"postgres"},
		Duration:  2 * time.Second,
		Requests: []blocktrace.Request{
			{At: 500 * ms, Latency: 2 * ms, Op: blocktrace.Read, Offset: 10<<20 + 8192, Size: 8192, Depth: 1},
			{At: 501 * ms, Latency: 2 * ms, Op: blocktrace.Read, Offset: 12 << 20, Size: 8192, Depth: 2},
			{At: 502 * ms, Latency: 1 * ms, Op: blocktrace.Write, Flags: blocktrace.FUA | blocktrace.Sync, Device: 1, Offset: 4096, Size: 4096, Depth: 1},
			{At: 510 * ms, Latency: 3 * ms, Op: blocktrace.Flush, Device: 1, Depth: 1},
			{At: 520 * ms, Latency: 1 * ms, Op: blocktrace.Write, Flags: blocktrace.Preflush, Offset: 11 << 20, Size: 16384, Depth: 1},
			{At: 600 * ms, Latency: -1, Op: blocktrace.Discard, Offset: 20 << 20, Size: 1 << 20, Depth: 1},
			{At: 1500 * ms, Latency: 4 * ms, Op: blocktrace.Read, Offset: 10 << 20, Size: 4096, Depth: 1},
		},
	}
}

func TestLayout(t *testing.T) {
	l := PlanLayout(twoDevices())
	// sdb spans 10 MiB to 12 MiB + 8 KiB: three aligned MiB; sdc's 4 KiB one.
	want := Layout{Base: []int64{10 << 20, 0}, Region: []int64{0, 3 << 20}, Size: 4 << 20}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("layout %+v, want %+v", l, want)
	}
	tr := twoDevices()
	if got := l.FileOffset(tr.Requests[2]); got != 3<<20+4096 {
		t.Errorf("log write at file offset %d, want %d", got, 3<<20+4096)
	}
}

func TestLanesKeepConcurrency(t *testing.T) {
	ms := time.Millisecond
	tr := blocktrace.Trace{Requests: []blocktrace.Request{
		{At: 0, Latency: 10 * ms, Op: blocktrace.Read, Size: 512},
		{At: 1 * ms, Latency: 10 * ms, Op: blocktrace.Read, Size: 512},
		{At: 2 * ms, Latency: 1 * ms, Op: blocktrace.Read, Size: 512},
		{At: 5 * ms, Latency: 1 * ms, Op: blocktrace.Read, Size: 512}, // lane 3 is free again
		{At: 12 * ms, Latency: -1, Op: blocktrace.Read, Size: 512},    // every lane free: the first
	}}
	lane, n := AssignLanes(tr)
	if want := []int{0, 1, 2, 2, 0}; !reflect.DeepEqual(lane, want) || n != 3 {
		t.Errorf("lanes %v (%d), want %v (3)", lane, n, want)
	}
}

func TestIOLogsAndJobFileGolden(t *testing.T) {
	tr := twoDevices()
	l := PlanLayout(tr)
	lanes, n := AssignLanes(tr)
	var logs []string
	for lane := range n {
		var b bytes.Buffer
		if err := WriteIOLog(&b, tr, l, "/srv/cand/dbio/replay/replay.data", lanes, lane, Recorded, 2); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, b.String())
	}
	golden(t, "lanes.iolog", strings.Join(logs, "---\n"))
	st := Count(tr)
	if st.Reads != 3 || st.Writes != 2 || st.Syncs != 3 || st.Discards != 1 {
		t.Errorf("count %+v, want 3 reads, 2 writes, 3 syncs (flush, FUA, preflush), 1 discard", st)
	}
	paths := []string{"/r/lane1.iolog", "/r/lane2.iolog"}
	var b bytes.Buffer
	if err := WriteIOLog(&b, tr, l, "/srv/cand/dbio/replay/replay.data", lanes, 0, Max, 1); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), " wait ") {
		t.Errorf("a replay as fast as possible waits:\n%s", b.String())
	}
	golden(t, "recorded.fio", JobFile(paths, "/srv/cand/dbio/replay/replay.data", Recorded, "replay"))
	golden(t, "max.fio", JobFile(paths, "/srv/cand/dbio/replay/replay.data", Max, "replay"))
	if err := WriteIOLog(&bytes.Buffer{}, tr, l, "/srv/my cand/replay.data", lanes, 0, Recorded, 1); err == nil {
		t.Error("a working file with a space was written into the I/O log")
	}
}

// TestLanesCarryData: a flush issued while both lanes' writes are in
// flight would open a lane of its own with no read or write, which fio
// refuses; it joins the first lane instead, and the syncs all stay.
func TestLanesCarryData(t *testing.T) {
	ms := time.Millisecond
	tr := blocktrace.Trace{Devices: []blocktrace.Device{{Name: "vdb"}}, Requests: []blocktrace.Request{
		{At: 0, Latency: 10 * ms, Op: blocktrace.Write, Offset: 0, Size: 4096},
		{At: ms, Latency: 10 * ms, Op: blocktrace.Write, Offset: 8192, Size: 4096},
		{At: 2 * ms, Latency: ms, Op: blocktrace.Flush},
	}}
	lane, lanes := AssignLanes(tr)
	if lanes != 2 || lane[0] != 0 || lane[1] != 1 || lane[2] != 0 {
		t.Fatalf("lanes %v of %d, want the flush folded into lane 0 of 2", lane, lanes)
	}
	var syncs int
	for l := range lanes {
		var b strings.Builder
		if err := WriteIOLog(&b, tr, PlanLayout(tr), "/x/replay.data", lane, l, Recorded, 1); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), " write ") {
			t.Errorf("lane %d carries no write:\n%s", l, b.String())
		}
		syncs += strings.Count(b.String(), " datasync ")
	}
	if syncs != 1 {
		t.Errorf("%d syncs in the logs, want the trace's 1", syncs)
	}
}
