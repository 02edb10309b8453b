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
	tracer, err := OpenTracer(DefaultTraceFS, []blocktrace.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer tracer.Close()
	// The file is laid out first, so that the capture sees the workload's
	// requests rather than the file system's allocation.
	file := filepath.Join(disk, "data")
	if out, err := exec.Command(fio, "--name=lay", "--filename="+file, "--size=32M", "--rw=write", "--bs=1M", "--output=/dev/null").CombinedOutput(); err != nil {
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
	if _, err := OpenTracer(DefaultTraceFS, nil); !errors.As(err, &se) {
		t.Errorf("no devices: err = %v, want a SetupError", err)
	}
}
