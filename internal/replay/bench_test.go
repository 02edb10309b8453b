package replay

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"dbio/internal/blocktrace"
	"dbio/internal/capture"
	"dbio/internal/execx"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// BenchmarkReplayAgainstFioAlone sets dbio's replay of a capture as fast
// as possible beside fio alone on the job file the replay kept in its
// results directory (fio --output-format=json replay.fio, on the same
// working file), one after the other in each round: dbio's reads and
// writes a second (over the span its requests took) and fio's own (its
// report's read and write IOPS), and dbio's as a percentage of fio's. The
// capture is of fio's random reads and writes with fdatasyncs on a loop
// device's ext4, replayed there. The two run in turn, dbio first in odd
// rounds and fio first in even ones, so that whatever the disk does over a
// round (its cache filling, another tenant's writes) falls on both alike;
// the median of the rounds' ratios is reported beside the sums' ratio,
// and its spread in the log.
//
//	go test ./internal/replay -run '^$' -bench ReplayAgainstFioAlone -benchtime 5x
func BenchmarkReplayAgainstFioAlone(b *testing.B) {
	testenv.Require(b, os.Geteuid() == 0, "root", testenv.HowRoot)
	fio := testenv.RequireProgram(b, "fio", testenv.InstallFio)
	host := target.HostFS()
	disk := smallfs.MountDisk(b, 256<<20)
	tr := captureFioLoad(b, fio, disk, 8*time.Second)
	work := filepath.Join(disk, "replay")
	if err := os.Mkdir(work, 0o755); err != nil {
		b.Fatal(err)
	}
	var dbioIOPS, fioIOPS float64
	var ratios []float64
	// The job file fio alone runs is the one dbio's first replay kept.
	jobs := filepath.Join(b.TempDir(), "replay.fio")
	replayOnce := func() Record {
		out := filepath.Join(b.TempDir(), "replay")
		if err := os.Mkdir(out, 0o755); err != nil {
			b.Fatal(err)
		}
		rec, err := Run(context.Background(), execx.Real{Proc: host.Proc}, Config{
			Fio: fio, Capture: "bench", Trace: tr, Target: disk, WorkDir: work, ResultsDir: out, Pace: Max, Speed: 1, Now: time.Now,
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := os.Stat(jobs); err != nil {
			if err := copyJobFile(filepath.Join(out, "replay.fio"), jobs); err != nil {
				b.Fatal(err)
			}
		}
		return rec
	}
	fioAlone := func() string {
		alone := b.TempDir()
		cmd := exec.Command(fio, "--output-format=json", "--output=alone.json", jobs)
		cmd.Dir = alone
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("fio alone: %v: %s", err, o)
		}
		return alone
	}
	b.ResetTimer()
	for i := range b.N {
		var rec Record
		var alone string
		if i%2 == 0 {
			rec = replayOnce()
			alone = fioAlone()
		} else {
			alone = fioAlone()
			rec = replayOnce()
		}
		var report struct {
			Jobs []struct {
				Read, Write struct {
					IOPS float64 `json:"iops"`
				}
			} `json:"jobs"`
		}
		raw, err := os.ReadFile(filepath.Join(alone, "alone.json"))
		if err == nil {
			err = json.Unmarshal(raw, &report)
		}
		if err != nil || len(report.Jobs) != 1 {
			b.Fatalf("fio alone's report: %v, %d jobs", err, len(report.Jobs))
		}
		d, f := rec.Reads.PerSecond+rec.Writes.PerSecond, report.Jobs[0].Read.IOPS+report.Jobs[0].Write.IOPS
		b.Logf("round %d: dbio %.0f IOPS, fio alone %.0f IOPS (%.1f %%), %d lanes, %.3f s", i+1, d, f, 100*d/f, rec.Log.Lanes, rec.RuntimeSeconds)
		dbioIOPS += d
		fioIOPS += f
		ratios = append(ratios, 100*d/f)
	}
	sort.Float64s(ratios)
	b.Logf("dbio as %% of fio alone, rounds from lowest to highest: %.1f", ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-dbio-%-of-fio")
	b.ReportMetric(dbioIOPS/float64(b.N), "dbio-iops")
	b.ReportMetric(fioIOPS/float64(b.N), "fio-iops")
	b.ReportMetric(100*dbioIOPS/fioIOPS, "dbio-%-of-fio")
}

// captureFioLoad captures d of fio's random reads and writes (as fast as
// they go, four in flight) with fdatasyncs on a file of disk, a loop
// device's ext4: enough requests that a replay as fast as possible lasts
// a second or so, long beside fio's start.
func captureFioLoad(tb testing.TB, fio, disk string, d time.Duration) blocktrace.Trace {
	tb.Helper()
	host := target.HostFS()
	dev, err := capture.DeviceUnder(host, disk)
	if err != nil {
		tb.Fatal(err)
	}
	tracer, err := capture.OpenTracer(capture.DefaultTraceFS, host.Sys, []blocktrace.Device{dev})
	if err != nil {
		tb.Fatal(err)
	}
	defer tracer.Close()
	file := filepath.Join(disk, "data")
	if out, err := exec.Command(fio, "--name=lay", "--filename="+file, "--size=16M", "--rw=write", "--bs=1M", "--direct=1", "--end_fsync=1", "--output=/dev/null").CombinedOutput(); err != nil {
		tb.Fatalf("lay out: %v: %s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, fio, "--name=load", "--filename="+file, "--size=16M", "--rw=randrw", "--bs=8k",
		"--direct=1", "--ioengine=libaio", "--iodepth=4", "--fdatasync=8", "--time_based", "--runtime=60", "--output=/dev/null")
	if err := load.Start(); err != nil {
		tb.Fatal(err)
	}
	defer load.Wait()
	if err := capture.AwaitIO(ctx, host.Proc, dev, 50); err != nil {
		tb.Fatal(err)
	}
	_, tr, err := capture.Run(ctx, tracer, capture.Config{Devices: []blocktrace.Device{dev}, Duration: d, Proc: host.Proc, Now: time.Now})
	cancel()
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

// copyJobFile copies the job file a replay kept, so that fio alone runs
// the same one in every round whichever ran first.
func copyJobFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
