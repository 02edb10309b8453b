package replay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/capture"
	"dbio/internal/execx"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestReplayOfACapture captures fio's I/O on a loop device's ext4 and
// replays it onto a tmpfs at the recorded pace and as fast as possible:
// every read, write and sync of the trace reaches fio.
func TestReplayOfACapture(t *testing.T) {
	testenv.Require(t, os.Geteuid() == 0, "root", "run the test as root")
	fio := testenv.RequireProgram(t, "fio", "apt-get install fio")
	host := target.HostFS()
	disk := smallfs.MountDisk(t, 128<<20)
	dev, err := capture.DeviceUnder(host, disk)
	if err != nil {
		t.Fatal(err)
	}
	tracer, err := capture.OpenTracer(capture.DefaultTraceFS, host.Sys, []blocktrace.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer tracer.Close()
	file := filepath.Join(disk, "data")
	if out, err := exec.Command(fio, "--name=lay", "--filename="+file, "--size=16M", "--rw=write", "--bs=1M", "--direct=1", "--end_fsync=1", "--output=/dev/null").CombinedOutput(); err != nil {
		t.Fatalf("lay out: %v: %s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, fio, "--name=load", "--filename="+file, "--size=16M", "--rw=randrw", "--bs=8k",
		"--direct=1", "--ioengine=libaio", "--iodepth=4", "--fdatasync=8", "--rate_iops=300", "--time_based", "--runtime=30", "--output=/dev/null")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	defer load.Wait()
	// The capture begins once the load is reading and writing.
	if err := capture.AwaitIO(ctx, host.Proc, dev, 50); err != nil {
		t.Fatal(err)
	}
	_, tr, err := capture.Run(ctx, tracer, capture.Config{Devices: []blocktrace.Device{dev}, Duration: 2 * time.Second, Proc: host.Proc, Now: time.Now})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	want := Count(tr)
	if want.Reads < 50 || want.Writes < 50 || want.Syncs < 5 {
		t.Fatalf("the capture saw too little of the load: %+v", want)
	}
	cand := smallfs.Mount(t, 256<<20)
	for _, pace := range []Pace{Recorded, Max} {
		t.Run(string(pace), func(t *testing.T) {
			work := filepath.Join(cand, string(pace))
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			rec, err := Run(context.Background(), execx.Real{Proc: host.Proc}, Config{
				Fio: fio, Capture: "test", Trace: tr, Target: cand, WorkDir: work, ResultsDir: out,
				Pace: pace, Speed: 1, Now: time.Now,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %.2f s for the source's %.2f s; reads p99 %.0f µs, writes p99 %.0f µs, syncs p99 %.0f µs; %d lanes",
				pace, rec.RuntimeSeconds, rec.ExpectedSeconds, rec.Reads.Latency.P99, rec.Writes.Latency.P99, rec.Syncs.Latency.P99, rec.Log.Lanes)
			if rec.Reads.Requests != want.Reads || rec.Writes.Requests != want.Writes || rec.Syncs.Requests != want.Syncs {
				t.Errorf("fio replayed %d reads, %d writes, %d syncs; the trace has %d, %d, %d",
					rec.Reads.Requests, rec.Writes.Requests, rec.Syncs.Requests, want.Reads, want.Writes, want.Syncs)
			}
			// fio logs a second only once one has passed.
			if (pace == Recorded && len(rec.Seconds) == 0) || rec.RuntimeSeconds <= 0 || rec.ExpectedSeconds <= 0 {
				t.Errorf("no timeline or runtime: %+v", rec)
			}
			if err := WriteRecord(out, rec); err != nil {
				t.Fatal(err)
			}
			back, err := Load(out)
			if err != nil || back.Reads != rec.Reads {
				t.Errorf("read back %+v, %v", back.Reads, err)
			}
		})
	}
}
