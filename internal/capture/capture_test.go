package capture

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestCaptureAgreesWithDiskstats traces a loop device's ext4 while fio
// reads, writes and fdatasyncs on it, and checks the trace against the
// device's own counters.
func TestCaptureAgreesWithDiskstats(t *testing.T) {
	testenv.Require(t, os.Geteuid() == 0, "root", "run the test as root")
	fio := testenv.RequireProgram(t, "fio", "apt-get install fio")
	disk := smallfs.MountDisk(t, 256<<20)
	host := target.HostFS()
	dev, err := DeviceUnder(host, disk)
	if err != nil {
		t.Fatal(err)
	}
	tracer, err := OpenTracer(DefaultTraceFS, host.Sys, []blocktrace.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer tracer.Close()
	// The file is laid out first, with direct I/O and synced, so that the
	// capture sees the workload's requests rather than the file system's
	// allocation or the writeback of the layout (megabyte requests, one of
	// which in flight at an end of the capture is a few percent of its bytes).
	file := filepath.Join(disk, "data")
	if out, err := exec.Command(fio, "--name=lay", "--filename="+file, "--size=32M", "--rw=write", "--bs=1M", "--direct=1", "--end_fsync=1", "--output=/dev/null").CombinedOutput(); err != nil {
		t.Fatalf("lay out: %v: %s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, fio, "--name=load", "--filename="+file, "--size=32M", "--rw=randrw", "--bs=8k",
		"--direct=1", "--ioengine=libaio", "--iodepth=4", "--fdatasync=16", "--time_based", "--runtime=30", "--output=/dev/null")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	defer load.Wait()
	// The capture begins once the load is reading and writing.
	if err := AwaitIO(ctx, host.Proc, dev, 50); err != nil {
		t.Fatal(err)
	}
	rec, tr, err := Run(ctx, tracer, Config{
		Devices: []blocktrace.Device{dev}, Duration: 2 * time.Second,
		Proc: host.Proc, Now: time.Now,
	})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if rec.LostEvents != 0 {
		t.Fatalf("the kernel dropped %d events", rec.LostEvents)
	}
	s, ds := rec.Signature, rec.Devices[0].Stats
	t.Logf("trace: %d reads %d B, %d writes %d B, %d flushes, %d empty writes; diskstats: %d reads %d B, %d writes %d B, %d flushes",
		s.Reads.Requests, s.Reads.Bytes, s.Writes.Requests, s.Writes.Bytes, s.Flushes.Requests, rec.EmptyWrites,
		ds.Reads, ds.ReadSectors*512, ds.Writes, ds.WriteSectors*512, ds.Flushes)
	if s.Reads.Requests < 100 || s.Writes.Requests < 100 || s.Flushes.Requests < 5 {
		t.Fatalf("the capture saw too little of the load to judge: %+v", s)
	}
	for _, c := range []struct {
		what        string
		trace, disk int64
	}{
		{"read requests", s.Reads.Requests, ds.Reads},
		{"read bytes", s.Reads.Bytes, ds.ReadSectors * 512},
		{"write requests", s.Writes.Requests + int64(rec.EmptyWrites), ds.Writes},
		{"write bytes", s.Writes.Bytes, ds.WriteSectors * 512},
	} {
		if math.Abs(float64(c.trace-c.disk)) > 0.02*float64(c.disk) {
			t.Errorf("%s: trace %d, /proc/diskstats %d: more than 2 %% apart", c.what, c.trace, c.disk)
		}
	}
	if len(tr.Requests) != rec.Requests || tr.Duration < 2*time.Second {
		t.Errorf("trace of %d requests over %v, record says %d", len(tr.Requests), tr.Duration, rec.Requests)
	}

	dir := t.TempDir()
	if err := WriteDir(dir, rec, tr); err != nil {
		t.Fatal(err)
	}
	back, backTrace, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Requests != rec.Requests || len(backTrace.Requests) != len(tr.Requests) {
		t.Errorf("read back %d requests, wrote %d", len(backTrace.Requests), len(tr.Requests))
	}
	if err := WriteDir(dir, rec, tr); !errors.Is(err, os.ErrExist) {
		t.Errorf("writing over a capture: err = %v, want it refused", err)
	}
}

func TestSetupRefusals(t *testing.T) {
	if err := NeedRoot(1000); err == nil {
		t.Error("a user other than root was not refused")
	}
	host := target.HostFS()
	var se *SetupError
	if _, err := DeviceAt(host, t.TempDir()); !errors.As(err, &se) {
		t.Errorf("a directory as --device: err = %v, want a SetupError", err)
	}
	if _, err := DeviceAt(host, filepath.Join(t.TempDir(), "none")); !errors.As(err, &se) {
		t.Errorf("a missing --device: err = %v, want a SetupError", err)
	}
	if _, err := DeviceUnder(host, "/proc"); !errors.As(err, &se) {
		t.Errorf("--target on a file system without a device: err = %v, want a SetupError", err)
	}
	if _, err := OpenTracer(DefaultTraceFS, host.Sys, nil); !errors.As(err, &se) {
		t.Errorf("no devices: err = %v, want a SetupError", err)
	}
}

// TestPartitionSpan: a partition's requests are traced on its disk, between
// its sectors, counted from its start; a flush is the disk's.
func TestPartitionSpan(t *testing.T) {
	sys := t.TempDir()
	part := filepath.Join(sys, "devices", "sdb", "sdb2")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{
		"devices/sdb/dev": "8:16\n", "devices/sdb/sdb2/partition": "2\n",
		"devices/sdb/sdb2/start": "2048\n", "devices/sdb/sdb2/size": "4096\n",
	} {
		if err := os.WriteFile(filepath.Join(sys, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(sys, "dev", "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/sdb/sdb2", filepath.Join(sys, "dev", "block", "8:18")); err != nil {
		t.Fatal(err)
	}
	dev := blocktrace.Device{Name: "sdb2", Major: 8, Minor: 18}
	sp, err := spanOf(sys, dev)
	if err != nil {
		t.Fatal(err)
	}
	if want := (span{disk: [2]uint32{8, 16}, partition: true, start: 2048, end: 6144}); sp != want {
		t.Fatalf("span %+v, want %+v", sp, want)
	}
	tr := &Tracer{devices: []blocktrace.Device{dev}, spans: []span{sp}}
	for _, tc := range []struct {
		ev   blocktrace.Event
		keep bool
		want uint64
	}{
		{blocktrace.Event{Major: 8, Minor: 16, Sector: 2048 + 8, Sectors: 8}, true, 8},
		{blocktrace.Event{Major: 8, Minor: 16, Sector: 100, Sectors: 8}, false, 0},  // sdb1's
		{blocktrace.Event{Major: 8, Minor: 16, Sector: 6144, Sectors: 8}, false, 0}, // past its end
		{blocktrace.Event{Major: 8, Minor: 16, Op: blocktrace.Flush}, true, 0},
		{blocktrace.Event{Major: 8, Minor: 32, Sector: 2048, Sectors: 8}, false, 0}, // another disk
	} {
		ev := tc.ev
		if kept := tr.place(&ev); kept != tc.keep || (kept && (ev.Sector != tc.want || ev.Minor != 18)) {
			t.Errorf("%+v: kept %v as %+v; want kept %v at sector %d of 8:18", tc.ev, kept, ev, tc.keep, tc.want)
		}
	}
	if err := os.WriteFile(filepath.Join(part, "dm"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var se *SetupError
	if _, err := spanOf(sys, dev); !errors.As(err, &se) {
		t.Errorf("a device-mapper device: err = %v, want a SetupError", err)
	}
}
