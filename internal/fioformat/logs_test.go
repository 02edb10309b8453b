package fioformat

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dbio/internal/results"
)

func TestParseLog(t *testing.T) {
	got, err := ParseLog(strings.NewReader("1795305830628, 60640, 0, 0, 0\n\n1795305830628, 25825, 1, 4096, 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []LogSample{{TimeMS: 1795305830628, Value: 60640, Dir: 0}, {TimeMS: 1795305830628, Value: 25825, Dir: 1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"1000, 5\n", "1000, x, 0\n"} {
		if _, err := ParseLog(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: error %v, want one naming line 1", bad, err)
		}
	}
}

func samples(dir int, pairs ...int64) []LogSample {
	var out []LogSample
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, LogSample{TimeMS: pairs[i], Value: pairs[i+1], Dir: dir})
	}
	return out
}

func TestMergeSeconds(t *testing.T) {
	const t0 = 1_000_000
	for _, tc := range []struct {
		name    string
		jobs    []JobLogs
		want    []Second // Time is checked as whole seconds after t0
		dropped int
	}{
		{
			name: "two jobs summed, latency weighted by IOPS",
			jobs: []JobLogs{
				{Job: "a.1", IOPS: samples(0, t0, 1000, t0+1000, 3000), BW: samples(0, t0, 4000, t0+1000, 12000), Clat: samples(0, t0+1, 100_000, t0+1001, 200_000)},
				{Job: "a.2", IOPS: samples(0, t0+2, 3000, t0+1002, 1000), BW: samples(0, t0+2, 12000, t0+1002, 4000), Clat: samples(0, t0+2, 300_000, t0+1002, 400_000)},
			},
			want: []Second{
				{ReadIOPS: 4000, MBPerSec: 16000 * 1024 / 1e6, LatMeanUS: 250, ReadLatMeanUS: 250},
				{ReadIOPS: 4000, MBPerSec: 16000 * 1024 / 1e6, LatMeanUS: 250, ReadLatMeanUS: 250},
			},
		},
		{
			name: "a short final interval is not a second",
			jobs: []JobLogs{{Job: "a.1", IOPS: samples(0, t0, 1000, t0+1000, 1000, t0+1040, 20), Clat: samples(0, t0, 100_000, t0+1000, 100_000, t0+1040, 900_000)}},
			want: []Second{{ReadIOPS: 1000, LatMeanUS: 100, ReadLatMeanUS: 100}, {ReadIOPS: 1000, LatMeanUS: 100, ReadLatMeanUS: 100}},
		},
		{
			name: "a second one job did not log is dropped",
			jobs: []JobLogs{
				{Job: "a.1", IOPS: samples(0, t0, 1000, t0+1000, 1000, t0+2000, 1000)},
				{Job: "a.2", IOPS: samples(0, t0, 1000, t0+1000, 1000)},
			},
			want:    []Second{{ReadIOPS: 2000}, {ReadIOPS: 2000}},
			dropped: 1,
		},
		{
			name: "a mix keeps directions apart",
			jobs: []JobLogs{{Job: "a.1", IOPS: append(samples(0, t0, 700), samples(1, t0, 300)...),
				Clat: append(samples(0, t0, 100_000), samples(1, t0, 500_000)...)}},
			want: []Second{{ReadIOPS: 700, WriteIOPS: 300, LatMeanUS: 220, ReadLatMeanUS: 100, WriteLatMeanUS: 500}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dropped := MergeSeconds(tc.jobs)
			if dropped != tc.dropped || len(got) != len(tc.want) {
				t.Fatalf("%d seconds, %d dropped; want %d and %d: %+v", len(got), dropped, len(tc.want), tc.dropped, got)
			}
			for i, g := range got {
				w := tc.want[i]
				if off := g.Time.UnixMilli() - t0; off != int64(i)*1000 {
					t.Errorf("second %d at +%d ms", i, off)
				}
				for _, f := range []struct {
					name      string
					got, want float64
				}{
					{"read iops", g.ReadIOPS, w.ReadIOPS}, {"write iops", g.WriteIOPS, w.WriteIOPS}, {"MB/s", g.MBPerSec, w.MBPerSec},
					{"latency", g.LatMeanUS, w.LatMeanUS}, {"read latency", g.ReadLatMeanUS, w.ReadLatMeanUS}, {"write latency", g.WriteLatMeanUS, w.WriteLatMeanUS},
				} {
					if f.want == 0 && math.IsNaN(f.got) {
						continue // no samples: no value
					}
					if math.Abs(f.got-f.want) > 1e-9 {
						t.Errorf("second %d %s = %v, want %v", i, f.name, f.got, f.want)
					}
				}
			}
		})
	}
}

// fio's own report is the known answer for its histogram arithmetic: every
// json+ bin is one of fio's bin values, and fio's percentile rule over
// those bins gives back the percentiles fio printed, to the nanosecond.
func TestHistPercentileIsFios(t *testing.T) {
	byValue := map[int64]int{}
	for i := range HistBins {
		byValue[int64(HistBinValue(i))] = i
	}
	for _, name := range []string{"randread", "mix", "hist"} {
		f, err := os.Open(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for dir, d := range map[string]*results.FioDirection{"read": out.Groups[0].Read, "write": out.Groups[0].Write} {
			if d == nil {
				continue
			}
			var bins []HistBin
			for ns, n := range d.Bins {
				i, ok := byValue[ns]
				if !ok {
					t.Fatalf("%s %s: json+ bin %d ns is not one of fio's bin values", name, dir, ns)
				}
				bins = append(bins, HistBin{Index: i, Count: n})
			}
			bins = MergeBins(bins)
			for _, p := range []float64{50, 99, 99.9} {
				want, ok := d.Completion.At(p)
				if !ok {
					t.Fatalf("%s %s: fio printed no p%v", name, dir, p)
				}
				if got := HistPercentile(bins, p) / 1000; got != want {
					t.Errorf("%s %s p%v = %v µs, fio says %v µs", name, dir, p, got, want)
				}
			}
		}
	}
	if !math.IsNaN(HistPercentile(nil, 99)) {
		t.Error("an empty histogram has a percentile")
	}
}

// A second's p99 needs every job's histogram of that second: without one
// job's, the I/Os it completed would be left out, and the second has no p99.
func TestSecondsP99NeedsEveryJobsHistogram(t *testing.T) {
	logs, err := ReadLogs(filepath.Join("testdata", "hist-logs"))
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := MergeSeconds(logs)
	logs[1].Hist = logs[1].Hist[:len(logs[1].Hist)-2] // job 2's last second, both directions
	cut, _ := MergeSeconds(logs)
	last := len(cut) - 1
	if len(cut) != len(whole) || !math.IsNaN(cut[last].LatP99US) || !math.IsNaN(cut[last].ReadLatP99US) || cut[0].LatP99US != whole[0].LatP99US {
		t.Errorf("with a histogram missing: %+v, whole %+v", cut, whole)
	}
	// The histogram logs are read back the same once compressed.
	dir := t.TempDir()
	copyJobOneLogs(t, dir)
	before, err := ReadLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CompressHistLogs(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "disk_clat_hist.1.log.gz")); err != nil {
		t.Fatal(err)
	}
	after, err := ReadLogs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || len(after[0].Hist) != len(before[0].Hist) || len(after[0].Hist) == 0 {
		t.Fatalf("read back %d samples, want %d", len(after[0].Hist), len(before[0].Hist))
	}
	for i := range before[0].Hist {
		if fmt.Sprint(before[0].Hist[i]) != fmt.Sprint(after[0].Hist[i]) {
			t.Errorf("sample %d differs once compressed", i)
		}
	}
}

// DiskSpd's IOPS standard deviation: of the per-second totals, around their mean.
func TestIOPSStdev(t *testing.T) {
	secs := []Second{{ReadIOPS: 900, WriteIOPS: 100}, {ReadIOPS: 1200}, {ReadIOPS: 600, WriteIOPS: 200}, {ReadIOPS: 1200}}
	// Totals 1000, 1200, 800, 1200: mean 1050, squared deviations 2500, 22500, 62500, 22500.
	if got, want := IOPSStdev(secs), math.Sqrt(110000.0/4); math.Abs(got-want) > 1e-9 {
		t.Errorf("stdev %v, want %v", got, want)
	}
	if IOPSStdev(secs[:1]) != 0 {
		t.Error("one second has a spread")
	}
}

// A link in a log directory is never followed, whatever log it is named
// as: the averaged logs and the histogram logs skip it alike, so a link
// cannot bring a file from outside the results directory into a point.
func TestReadLogsSkipsLinks(t *testing.T) {
	outside := t.TempDir()
	copyJobOneLogs(t, outside)
	tests := []struct{ name, link string }{
		{"histogram log", "disk_clat_hist.2.log"},
		{"averaged log", "disk_iops.2.log"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(outside, strings.Replace(tc.link, ".2.", ".1.", 1))
			if err := os.Symlink(target, filepath.Join(dir, tc.link)); err != nil {
				t.Fatal(err)
			}
			logs, err := ReadLogs(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(logs) != 0 {
				t.Errorf("read %d jobs through a link, want none (first: %s)", len(logs), logs[0].Job)
			}
		})
	}
}

// copyJobOneLogs copies job 1's histogram and IOPS logs from testdata into dir.
func copyJobOneLogs(t *testing.T, dir string) {
	t.Helper()
	for _, n := range []string{"disk_clat_hist.1.log", "disk_iops.1.log"} {
		b, err := os.ReadFile(filepath.Join("testdata", "hist-logs", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A job's last interval, flushed less than half a second after the one
// before it in its direction, is not a second; the other direction's
// samples at the same times are judged on their own.
func TestWholeIntervals(t *testing.T) {
	samples := []LogSample{{TimeMS: 1000, Dir: 0}, {TimeMS: 1000, Dir: 1}, {TimeMS: 2000, Dir: 0},
		{TimeMS: 2040, Dir: 0}, {TimeMS: 2400, Dir: 1}, {TimeMS: 3000, Dir: 0}}
	got := slices.Collect(WholeIntervals(samples))
	want := []LogSample{{TimeMS: 1000, Dir: 0}, {TimeMS: 1000, Dir: 1}, {TimeMS: 2000, Dir: 0}, {TimeMS: 2400, Dir: 1}, {TimeMS: 3000, Dir: 0}}
	if !slices.Equal(got, want) {
		t.Errorf("WholeIntervals = %v, want %v", got, want)
	}
	for _, c := range []struct{ timeMS, want int64 }{{1000, 0}, {1499, 0}, {1500, 1}, {2990, 2}, {400, -1}} {
		if got := SecondOf(1000, c.timeMS); got != c.want {
			t.Errorf("SecondOf(1000, %d) = %d, want %d", c.timeMS, got, c.want)
		}
	}
}

// fio 3.33 now and then logs an interval histogram whose bin is an
// unsigned difference that wrapped (2^64 - 2^32 was seen over client/server):
// the line is read, marked, and its second has no percentile, instead of the
// whole point failing to parse.
func TestWrappedHistogramLeavesItsSecondWithoutPercentile(t *testing.T) {
	src := filepath.Join("testdata", "hist-logs")
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "disk_clat_hist.2.log" {
			lines := strings.Split(string(b), "\n")
			f := strings.Split(lines[0], ", ")
			f[3+HistBins-3] = "18446744069414584320"
			lines[0] = strings.Join(f, ", ")
			b = []byte(strings.Join(lines, "\n"))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := ReadLogs(src)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := ReadLogs(dir)
	if err != nil {
		t.Fatalf("a wrapped bin failed the logs: %v", err)
	}
	if got := logs[1].WrappedHists(); got != 1 || logs[0].WrappedHists() != 0 {
		t.Fatalf("wrapped histograms: job 1 %d, job 2 %d; want 0 and 1", logs[0].WrappedHists(), got)
	}
	if h := logs[1].Hist[0]; !h.Wrapped || h.Bins != nil {
		t.Errorf("the wrapped line kept bins: %+v", h)
	}
	wholeSecs, _ := MergeSeconds(whole)
	secs, _ := MergeSeconds(logs)
	if len(secs) != len(wholeSecs) {
		t.Fatalf("%d seconds, want %d", len(secs), len(wholeSecs))
	}
	dir0 := logs[1].Hist[0].Dir
	p99 := func(s Second) float64 {
		if dir0 == 0 {
			return s.ReadLatP99US
		}
		return s.WriteLatP99US
	}
	if !math.IsNaN(p99(secs[0])) || math.IsNaN(p99(wholeSecs[0])) {
		t.Errorf("first second's p99 %v with the wrapped line, %v without; want unknown and known", p99(secs[0]), p99(wholeSecs[0]))
	}
	if secs[0].IOPS() != wholeSecs[0].IOPS() || secs[len(secs)-1].LatP99US != wholeSecs[len(secs)-1].LatP99US {
		t.Error("the wrapped line changed more than its second's percentiles")
	}
}
