package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/execx"
	"dbio/internal/fio"
	"dbio/internal/fioformat"
	"dbio/internal/results"
	"dbio/internal/testenv"
	"dbio/internal/units"
)

// measured is what one fio run did, read from fio's own report.
type measured struct {
	options   map[string]string // global and job options, as fio echoes them
	bs        float64           // bytes per I/O
	readShare float64           // reads among all I/Os
	depth     string            // the queue-depth bucket most I/Os were submitted at
	iops      float64
}

func measure(t *testing.T, report []byte) measured {
	t.Helper()
	out, err := fioformat.Parse(bytes.NewReader(report))
	if err != nil || len(out.Groups) != 1 {
		t.Fatalf("fio report: %v (%d groups)", err, len(out.Groups))
	}
	g := out.Groups[0]
	m := measured{options: map[string]string{}}
	for k, v := range out.GlobalOptions {
		m.options[k] = v
	}
	for k, v := range g.Options {
		m.options[k] = v
	}
	var ios, bytes float64
	for _, d := range []*results.FioDirection{g.Read, g.Write} {
		if d != nil {
			ios += float64(d.IOs)
			bytes += float64(d.Bytes)
			m.iops += d.IOPS
		}
	}
	if ios == 0 {
		t.Fatal("fio did no I/O")
	}
	m.bs = bytes / ios
	if g.Read != nil {
		m.readShare = float64(g.Read.IOs) / ios
	}
	var raw struct {
		Jobs []struct {
			Levels map[string]float64 `json:"iodepth_level"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(report[bytesIndex(report, '{'):], &raw); err != nil || len(raw.Jobs) != 1 {
		t.Fatalf("iodepth_level: %v", err)
	}
	best := -1.0
	for level, share := range raw.Jobs[0].Levels {
		if share > best {
			m.depth, best = level, share
		}
	}
	return m
}

func bytesIndex(b []byte, c byte) int { return max(bytes.IndexByte(b, c), 0) }

// TestDiskSpdLineAgainstFio runs a DiskSpd line through dbio and, on the
// same target and working file, the same test written by hand as an fio
// command from DiskSpd's documented switches (not from dbio's
// translation): twice each, interleaved, so that both meet the same drift.
// They must do the same I/O (block size, queue depth, read share, caching)
// and their IOPS must differ by no more than their own repeats do, within
// a generous bound: the check is for a mistranslation (a queue of 2
// instead of 8, buffered instead of direct), not for a few per cent.
func TestDiskSpdLineAgainstFio(t *testing.T) {
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	target, base := t.TempDir(), t.TempDir()
	// 8 KiB random, 8 in flight per thread, 2 threads, 30 % writes, 3 s
	// after a 1 s warm-up, no OS cache and write-through, on a 64 MiB file.
	const line = "-b8K -o8 -t2 -r -w30 -d3 -W1 -Sh -L -c64M"
	hand := []string{"--name=hand", "--rw=randrw", "--rwmixread=70", "--bs=8k", "--iodepth=8", "--numjobs=2",
		"--direct=1", "--sync=dsync", "--time_based", "--runtime=3", "--ramp_time=1", "--size=64m", "--randrepeat=0",
		"--group_reporting", "--output-format=json"}
	var viaDBIO, byHand []measured
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		name := fmt.Sprintf("diskspd%d", i)
		if code := run(context.Background(), testApp(&out), []string{"disk", "--target", target, "--diskspd", line,
			"--results", base, "--name", name}); code != exitOK {
			t.Fatalf("dbio disk --diskspd: exit %d\n%s", code, out.String())
		}
		// The mixed point is split into reads, writes and both, as
		// DiskSpd splits it, and -L's percentile table follows.
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^ +IOPS +MB/s +mean +p50 +p90 +p95 +p99 +p99\.9 +p99\.99 +max ms$`),
			regexp.MustCompile(`(?m)^ +read +[0-9,]+ +[0-9.]+( +[0-9.]+){8}$`),
			regexp.MustCompile(`(?m)^ +write +[0-9,]+ +[0-9.]+( +[0-9.]+){8}$`),
			regexp.MustCompile(`(?m)^ +total +[0-9,]+ +[0-9.]+( +[0-9.]+){8}$`),
			regexp.MustCompile(`(?m)^ +%-ile +read \(ms\) +write \(ms\) +total \(ms\)$`),
			regexp.MustCompile(`(?m)^ +8-nines( +[0-9]+\.[0-9]{3}){3}$`),
		} {
			if !want.MatchString(out.String()) {
				t.Errorf("dbio disk --diskspd printed no line matching %s:\n%s", want, out.String())
			}
		}
		reports, _ := filepath.Glob(filepath.Join(base, "*-"+name, "steps", "00-*", fio.OutputFileName))
		if len(reports) != 1 {
			t.Fatalf("fio reports %v", reports)
		}
		report, err := os.ReadFile(reports[0])
		if err != nil {
			t.Fatal(err)
		}
		m := measure(t, report)
		viaDBIO = append(viaDBIO, m)

		// By hand, on dbio's working file, with the ioengine dbio found usable here.
		args := append(append([]string(nil), hand...), "--filename="+filepath.Join(target, "dbio", fio.WorkSubdir, "work.dat"),
			"--ioengine="+m.options["ioengine"])
		res, err := (execx.Real{}).Run(context.Background(), execx.Cmd{Name: "fio", Args: args})
		if err != nil {
			t.Fatalf("fio by hand: %v\n%s", err, res.Stderr)
		}
		byHand = append(byHand, measure(t, res.Stdout))
	}

	for i := range viaDBIO {
		d, h := viaDBIO[i], byHand[i]
		t.Logf("run %d: dbio %.0f IOPS (bs %.0f, reads %.3f, depth %s); fio by hand %.0f IOPS (bs %.0f, reads %.3f, depth %s)",
			i+1, d.iops, d.bs, d.readShare, d.depth, h.iops, h.bs, h.readShare, h.depth)
		for _, m := range []measured{d, h} {
			// fio's byte and I/O counts are taken at slightly different moments.
			if math.Abs(m.bs-8192) > 0.01*8192 {
				t.Errorf("%.0f bytes per I/O, want 8192 (-b8K)", m.bs)
			}
			if n, err := units.ParseBytes(m.options["bs"]); err != nil || n != 8192 {
				t.Errorf("fio option bs %q, want 8 KiB (-b8K)", m.options["bs"])
			}
			if math.Abs(m.readShare-0.70) > 0.03 {
				t.Errorf("read share %.3f, want 0.70 (-w30)", m.readShare)
			}
		}
		if d.depth != h.depth {
			t.Errorf("queue depth: dbio's I/Os mostly at %s in flight, by hand at %s", d.depth, h.depth)
		}
		for _, k := range []string{"rw", "rwmixread", "iodepth", "numjobs", "direct", "sync", "runtime", "ramp_time"} {
			if !sameOption(d.options[k], h.options[k]) {
				t.Errorf("fio option %s: dbio ran %q, by hand %q", k, d.options[k], h.options[k])
			}
		}
	}
	// IOPS within run-to-run noise: the two sides' means against the
	// larger spread of either side's own two runs.
	spread := math.Max(ratio(viaDBIO[0].iops, viaDBIO[1].iops), ratio(byHand[0].iops, byHand[1].iops))
	between := ratio((viaDBIO[0].iops+viaDBIO[1].iops)/2, (byHand[0].iops+byHand[1].iops)/2)
	bound := 1.5 * spread * spread
	t.Logf("IOPS: dbio against fio by hand %.2fx; repeats spread %.2fx; bound %.2fx", between, spread, bound)
	if between > bound {
		t.Errorf("dbio's translation and fio by hand differ by %.2fx in IOPS, beyond their repeats' spread %.2fx (bound %.2fx)", between, spread, bound)
	}
}

// ratio is the larger of a and b over the smaller.
func ratio(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return math.Inf(1)
	}
	return math.Max(a, b) / math.Min(a, b)
}

// sameOption compares fio option values as fio would read them ("8" and "8").
func sameOption(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.Atoi(strings.TrimSpace(a))
	y, errB := strconv.Atoi(strings.TrimSpace(b))
	return errA == nil && errB == nil && x == y
}

// TestDiskSpdDryRunShowsTheJob: the dry run says what every switch became
// and prints the fio job file the run will write, touching nothing.
func TestDiskSpdDryRunShowsTheJob(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not-mounted-yet")
	var out bytes.Buffer
	code := run(context.Background(), testApp(&out), []string{"disk", "-t", dir, "-n", "--diskspd", `diskspd.exe -b8K -o8 -t4 -r -w30 -d60 -W5 -Sh -L D:\sql\test.dat`})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, want := range []string{
		"as fio: randrw 70 % reads, 8.0 KiB, 4 job(s) × 8 in flight, 1m0s after 5s warm-up, O_DIRECT + O_DSYNC",
		"-Sh", "direct=1 sync=dsync", `DiskSpd's target D:\sql\test.dat: dbio measures each --target directory instead`,
		"profile job: 1 point(s), about 1m5s",
		"rw=randrw\nrwmixread=70\nbs=8192\niodepth=8\nnumjobs=4\ntime_based=1\nruntime=60\nramp_time=5\n",
		"filename=" + filepath.Join(dir, "dbio", "fio", "work.dat") + "\nioengine=io_uring\ndirect=1\nsync=dsync\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the dry run touched the target: %v", err)
	}
}
