package fioformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"dbio/internal/results"
)

// The fuzz targets below take fio's output as an attacker or a broken fio
// could write it. Their seeds are the real captures in testdata, so that
// `go test` runs them as ordinary tests; `go test -fuzz=FuzzParse` explores
// from there. Each asserts what the rest of dbio relies on, not only that
// nothing panics.

// FuzzParse checks that a json+ report either fails with an error or gives
// figures dbio can record: no negative count, rate or latency, percentiles
// in order and within 0-100, and a result that encodes as JSON (a NaN would
// make the step's summary.json impossible to write).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("fio: terminating on signal 15\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Parse(bytes.NewReader(data))
		if err != nil {
			if out != nil {
				t.Fatalf("error %v with a result", err)
			}
			if errors.Is(err, ErrNoOutput) && jsonStart(data) >= 0 {
				t.Fatalf("ErrNoOutput for output with a report at %d", jsonStart(data))
			}
			return
		}
		for _, n := range out.Notes {
			if n == "" {
				t.Error("an empty note")
			}
		}
		for _, g := range out.Groups {
			nonNegative(t, g.Name+" elapsed", float64(g.ElapsedS))
			nonNegative(t, g.Name+" job runtime", float64(g.JobRuntimeMS))
			nonNegative(t, g.Name+" usr cpu", g.UsrCPU)
			nonNegative(t, g.Name+" sys cpu", g.SysCPU)
			nonNegative(t, g.Name+" context switches", float64(g.ContextSwitches))
			checkDirection(t, g.Name+" read", g.Read)
			checkDirection(t, g.Name+" write", g.Write)
			checkDirection(t, g.Name+" mixed", g.Total)
			if ss := g.SteadyState; ss != nil {
				nonNegative(t, g.Name+" steady window IOPS", ss.WindowIOPSMean)
				nonNegative(t, g.Name+" steady window MB/s", ss.WindowMBPerSec)
			}
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("a parsed report does not encode: %v", err)
		}
	})
}

// FuzzParseFigures puts fuzzed figures into the places of a json+ report
// that dbio reads, where byte-level mutation of a whole report rarely
// reaches: counts, rates, a percentile's key and value, a latency bin.
func FuzzParseFigures(f *testing.F) {
	f.Add(int64(168490), int64(1380352000), 56032.59, 459046225.0, int64(3007), "99.000000", 708608.0, "223", int64(1), 4.74, int64(40680))
	f.Add(int64(0), int64(4096), 0.0, 0.0, int64(0), "50.000000", 0.0, "0", int64(0), 0.0, int64(0))
	f.Fuzz(func(t *testing.T, ios, nbytes int64, iops, bw float64, runtime int64, pkey string, pval float64, bin string, count int64, cpu float64, ctx int64) {
		num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		key, err := json.Marshal(pkey)
		if err != nil {
			return
		}
		binKey, err := json.Marshal(bin)
		if err != nil {
			return
		}
		if math.IsNaN(iops) || math.IsInf(iops, 0) || math.IsNaN(bw) || math.IsInf(bw, 0) || math.IsNaN(pval) || math.IsInf(pval, 0) || math.IsNaN(cpu) || math.IsInf(cpu, 0) {
			return // JSON has no spelling for them
		}
		dir := fmt.Sprintf(`{"io_bytes":%d,"bw_bytes":%s,"iops":%s,"runtime":%d,"total_ios":%d,`+
			`"slat_ns":{"min":1,"max":2,"mean":1.5,"stddev":0.5,"N":%d},`+
			`"clat_ns":{"min":%s,"max":%s,"mean":%s,"stddev":1,"N":%d,"percentile":{%s:%s},"bins":{%s:%d}},`+
			`"lat_ns":{"min":1,"max":2,"mean":1.5,"stddev":0.5,"N":%d}}`,
			nbytes, num(bw), num(iops), runtime, ios, ios, num(pval), num(pval), num(pval), ios, key, num(pval), binKey, count, ios)
		report := fmt.Sprintf(`{"fio version":"fio-3.33","timestamp_ms":1,"jobs":[{"jobname":"disk","groupid":0,"error":0,"elapsed":%d,`+
			`"job_runtime":%d,"usr_cpu":%s,"sys_cpu":%s,"ctx":%d,"read":%s,"mixed":%s}]}`, runtime, runtime, num(cpu), num(cpu), ctx, dir, dir)
		out, err := Parse(strings.NewReader(report))
		if err != nil {
			return
		}
		g := out.Groups[0]
		checkDirection(t, "read", g.Read)
		checkDirection(t, "mixed", g.Total)
		nonNegative(t, "elapsed", float64(g.ElapsedS))
		nonNegative(t, "usr cpu", g.UsrCPU)
		nonNegative(t, "context switches", float64(g.ContextSwitches))
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("a parsed report does not encode: %v", err)
		}
	})
}

func nonNegative(t *testing.T, what string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Errorf("%s = %v, want a finite value >= 0", what, v)
	}
}

func checkDirection(t *testing.T, what string, d *results.FioDirection) {
	t.Helper()
	if d == nil {
		return
	}
	nonNegative(t, what+" ios", float64(d.IOs))
	nonNegative(t, what+" bytes", float64(d.Bytes))
	nonNegative(t, what+" bytes/s", d.BytesPerSec)
	nonNegative(t, what+" iops", d.IOPS)
	nonNegative(t, what+" runtime", float64(d.RuntimeMS))
	for name, l := range map[string]results.FioLatency{"clat": d.Completion, "slat": d.Submission, "lat": d.Total} {
		nonNegative(t, what+" "+name+" n", float64(l.N))
		nonNegative(t, what+" "+name+" min", l.MinUS)
		nonNegative(t, what+" "+name+" max", l.MaxUS)
		nonNegative(t, what+" "+name+" mean", l.MeanUS)
		nonNegative(t, what+" "+name+" stdev", l.StdevUS)
		for i, p := range l.Percentiles {
			if !(p.P >= 0 && p.P <= 100) {
				t.Errorf("%s %s percentile %v is outside 0-100", what, name, p.P)
			}
			if i > 0 && !(l.Percentiles[i-1].P < p.P) {
				t.Errorf("%s %s percentiles not strictly ascending: %v then %v", what, name, l.Percentiles[i-1].P, p.P)
			}
			nonNegative(t, what+" "+name+" percentile value", p.US)
		}
	}
	for ns, n := range d.Bins {
		if ns < 0 || n < 0 {
			t.Errorf("%s latency bin %d ns holds %d", what, ns, n)
		}
	}
}

// FuzzLogs checks fio's per-second logs as ParseLog reads them and
// MergeSeconds sums them: the seconds come out in time order with rates
// that are finite and not negative, every second is either kept or counted
// as dropped, and two identical jobs sum to exactly twice one of them with
// the same latency.
func FuzzLogs(f *testing.F) {
	for _, dir := range []string{"randread-logs", "mix-logs"} {
		read := func(kind string) []byte {
			b, err := os.ReadFile(filepath.Join("testdata", dir, "disk_"+kind+".1.log"))
			if err != nil {
				f.Fatal(err)
			}
			return b
		}
		f.Add(read("iops"), read("bw"), read("clat"))
	}
	f.Add([]byte("1000, 5, 0, 4096, 0\n2000, 6, 1, 4096, 0\n"), []byte("1000, 20, 0\n"), []byte("1000, 7000, 0\n2400, 9000, 1\n"))
	f.Fuzz(func(t *testing.T, iopsLog, bwLog, clatLog []byte) {
		var job JobLogs
		for _, l := range []struct {
			data []byte
			dst  *[]LogSample
		}{{iopsLog, &job.IOPS}, {bwLog, &job.BW}, {clatLog, &job.Clat}} {
			s, err := ParseLog(bytes.NewReader(l.data))
			if err != nil {
				if s != nil {
					t.Fatalf("error %v with samples", err)
				}
				return
			}
			for _, x := range s {
				if x.TimeMS < 0 || x.Value < 0 || x.Dir < 0 || x.Dir > 2 {
					t.Fatalf("accepted sample %+v: time, value and direction (0-2) must not be negative", x)
				}
			}
			*l.dst = s
		}
		one, dropped := MergeSeconds([]JobLogs{job})
		checkSeconds(t, one)
		distinct := map[int64]bool{}
		if len(job.IOPS) > 0 || len(job.BW) > 0 || len(job.Clat) > 0 {
			t0 := int64(math.MaxInt64)
			for _, s := range [][]LogSample{job.IOPS, job.BW, job.Clat} {
				if len(s) > 0 {
					t0 = min(t0, s[0].TimeMS)
				}
			}
			for _, s := range job.IOPS {
				distinct[int64(math.Round(float64(s.TimeMS-t0)/1000))] = true
			}
		}
		if len(one)+dropped > len(distinct) {
			t.Errorf("%d seconds kept and %d dropped from %d distinct seconds of IOPS", len(one), dropped, len(distinct))
		}
		two, dropped2 := MergeSeconds([]JobLogs{job, job})
		checkSeconds(t, two)
		if len(two) != len(one) || dropped2 != dropped {
			t.Fatalf("two identical jobs: %d seconds (%d dropped), one job: %d (%d dropped)", len(two), dropped2, len(one), dropped)
		}
		for i := range one {
			a, b := one[i], two[i]
			if !a.Time.Equal(b.Time) || b.ReadIOPS != 2*a.ReadIOPS || b.WriteIOPS != 2*a.WriteIOPS || !near(b.MBPerSec, 2*a.MBPerSec) ||
				!near(a.LatMeanUS, b.LatMeanUS) || !near(a.ReadLatMeanUS, b.ReadLatMeanUS) || !near(a.WriteLatMeanUS, b.WriteLatMeanUS) {
				t.Errorf("second %d: one job %+v, two identical jobs %+v", i, a, b)
			}
		}
	})
}

func checkSeconds(t *testing.T, secs []Second) {
	t.Helper()
	if !sort.SliceIsSorted(secs, func(i, j int) bool { return secs[i].Time.Before(secs[j].Time) }) {
		t.Errorf("seconds out of order")
	}
	for i, s := range secs {
		if i > 0 && !secs[i-1].Time.Before(s.Time) {
			t.Errorf("second %d at %v, not after %v", i, s.Time, secs[i-1].Time)
		}
		nonNegative(t, "read IOPS", s.ReadIOPS)
		nonNegative(t, "write IOPS", s.WriteIOPS)
		nonNegative(t, "MB/s", s.MBPerSec)
		for _, lat := range []float64{s.LatMeanUS, s.ReadLatMeanUS, s.WriteLatMeanUS} {
			if !math.IsNaN(lat) { // NaN is "no latency this second", left out of series.csv
				nonNegative(t, "latency", lat)
			}
		}
	}
}

// near compares two figures that may both be NaN, to 1e-9 relative.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
