package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/execx"
	"dbio/internal/fio"
	"dbio/internal/results"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// measured builds a completed fio point with fio-like figures.
func measured(label, series, name string, iops, mbs, meanUS, p99US float64) results.FioPoint {
	return results.FioPoint{
		FioPlan: results.FioPlan{Name: name, Series: series, Label: label},
		Status:  results.StatusCompleted,
		FioDirections: results.FioDirections{Total: &results.FioDirection{IOPS: iops, BytesPerSec: mbs * 1e6, Completion: results.FioLatency{MeanUS: meanUS,
			Percentiles: []results.FioPercentile{{P: 50, US: meanUS}, {P: 99, US: p99US}}}}},
	}
}

// TestBestWithinFioPoints: the latency-bounded best points of fio's points
// as the results record them (fio.Steps), on either statistic.
func TestBestWithinFioPoints(t *testing.T) {
	failed := measured("nvme", "randread", "randread-8k-qd128", 900000, 7000, 100, 200)
	failed.Status = results.StatusFailed
	points := []results.FioPoint{
		measured("nvme", "randread", "randread-8k-qd1", 10000, 80, 100, 300),
		measured("nvme", "randread", "randread-8k-qd32", 200000, 1600, 4000, 25000),
		measured("nvme", "randread", "randread-64k-qd32", 50000, 3200, 19000, 40000),
		measured("nvme", "randread", "randread-64k-qd64", 52000, 3300, 21000, 60000),
		failed,
		measured("nvme", "randwrite", "randwrite-8k-qd1", 5000, 40, 25000, 30000),
		measured("sata", "randread", "randread-8k-qd1", 8000, 64, 125, 400),
		measured("sata", "randread", "randread-8k-qd32", 8000, 64, 4000, 9000),
	}
	for _, tc := range []struct {
		name  string
		bound analysis.LatencyBound
		want  []string
	}{
		{"mean under 20ms", analysis.LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatMean}, []string{
			"nvme randread 3/4 iops=randread-8k-qd32 mb=randread-64k-qd32",
			"nvme randwrite 0/1 iops=- mb=-",
			// A tie on IOPS goes to the earlier, lighter point.
			"sata randread 2/2 iops=randread-8k-qd1 mb=randread-8k-qd1",
		}},
		{"p99 under 20ms", analysis.LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatP99}, []string{
			"nvme randread 1/4 iops=randread-8k-qd1 mb=randread-8k-qd1",
			"nvme randwrite 0/1 iops=- mb=-",
			"sata randread 2/2 iops=randread-8k-qd1 mb=randread-8k-qd1",
		}},
		{"the bound itself is within", analysis.LatencyBound{Max: 21 * time.Millisecond, Stat: results.StatMean}, []string{
			"nvme randread 4/4 iops=randread-8k-qd32 mb=randread-64k-qd64",
			"nvme randwrite 0/1 iops=- mb=-",
			"sata randread 2/2 iops=randread-8k-qd1 mb=randread-8k-qd1",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range analysis.BestWithin(fio.Steps(points), tc.bound) {
				pick := func(p *analysis.Pick) string {
					if p == nil {
						return "-"
					}
					return p.Name
				}
				got = append(got, fmt.Sprintf("%s %s %d/%d iops=%s mb=%s", r.Label, r.Series, r.Within, r.Points, pick(r.BestIOPS), pick(r.BestMBPerSec)))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestLatencyBoundedTable(t *testing.T) {
	b := analysis.LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatMean}
	rows := analysis.BestWithin(fio.Steps([]results.FioPoint{
		measured("nvme", "randread", "randread-8k-qd32", 200000, 1638.4, 4000, 25000),
		measured("nvme", "randwrite", "randwrite-8k-qd1", 5000, 40, 25000, 30000),
	}), b)
	got := strings.Join(latencyBoundedTable(rows, b), "\n") + "\n"
	want := `best within mean latency ≤ 20ms:
target  pattern    within  best IOPS          at                     best MB/s         at
nvme    randread   1/1     200,000 (4.00 ms)  randread-8k-qd32       1638.4 (4.00 ms)  randread-8k-qd32
nvme    randwrite  0/1     -                  none within the bound  -
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func ratePoint(name string, pct float64, iops, meanUS float64) results.FioPoint {
	r := measured("nvme", "randread-4k", name, iops, iops*4096/1e6, meanUS, meanUS*3)
	r.RateOf, r.RatePct, r.RateIOPS = "randread-4k-max", pct, int64(pct*1000)
	return r
}

func TestCurvesAndKnee(t *testing.T) {
	points := []results.FioPoint{
		measured("nvme", "randread-4k", "randread-4k-max", 100000, 409.6, 1200, 3000),
		ratePoint("r10", 10, 10000, 200),
		ratePoint("r50", 50, 50000, 250),
		ratePoint("r90", 90, 89000, 380),
		ratePoint("r100", 100, 99000, 900),
		ratePoint("r120", 120, 100500, 1300),
	}
	curves := analysis.Curves(fio.Steps(points))
	if len(curves) != 1 || curves[0].Max == nil || len(curves[0].Points) != 5 {
		t.Fatalf("curves %+v", curves)
	}
	if k := curves[0].Knee(); k != 3 {
		t.Errorf("knee at %d, want 3 (100 %%: 900 µs ≥ twice 200 µs)", k)
	}
	if _, ok := curves[0].Overshoot(); ok {
		t.Error("a saturated curve reported an overshoot")
	}
	noisy := analysis.Curve{Max: &analysis.CurvePoint{IOPS: 50000}, Points: []analysis.CurvePoint{{Pct: 100, TargetIOPS: 50000, IOPS: 49990}, {Pct: 120, TargetIOPS: 60000, IOPS: 59900}}}
	if p, ok := noisy.Overshoot(); !ok || p.Pct != 120 {
		t.Errorf("a maximum beaten by the 120 %% point went unnoticed: %v %v", p, ok)
	}
	flat := analysis.Curve{Points: []analysis.CurvePoint{{Pct: 10, MeanUS: 100}, {Pct: 100, MeanUS: 150}}}
	if k := flat.Knee(); k != -1 {
		t.Errorf("flat curve knee %d", k)
	}
	lines := curveTable(curves)
	if !strings.HasPrefix(lines[0], "I/O-rate curve nvme randread-4k (maximum 100,000 IOPS, mean 1.20 ms, p99 3.00 ms)") ||
		!strings.Contains(lines[len(lines)-1], "latency bends at 100% of the maximum (99,000 IOPS)") {
		t.Errorf("table:\n%s", strings.Join(lines, "\n"))
	}
	if lines := curveTable(analysis.Curves(fio.Steps(points[:1]))); lines != nil {
		t.Errorf("a plan without rate points has curve lines: %q", lines)
	}
}

// TestFioConclusions runs a disk plan through real fio: its conclusions
// (the latency-bounded table sqlio asks for, on the bound's statistic) are
// printed as the phase ends and kept in run.json's notes, one row for each
// pattern on each target.
func TestFioConclusions(t *testing.T) {
	testenv.RequireProgram(t, "fio", fio.InstallHint)
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ramp := time.Duration(0)
	c := fio.Config{Profile: "sqlio", Targets: dirs, BlockSizes: []int64{64 << 10}, IODepths: []int{8}, RW: []string{"randread", "write"},
		LatencyStat: results.StatP99, Runtime: time.Second, Ramp: &ramp, Size: 16 << 20}
	var out strings.Builder
	o, err := RunDisk(context.Background(), DiskPlan{Name: "disk", Command: []string{"dbio", "disk"}, ResultsBase: t.TempDir(),
		Fio: FioPhase{Config: c, Exec: execx.Real{Proc: "/proc"}}}, Env{Out: &out, Now: time.Now, SysFS: target.HostFS()})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	l, err := results.Load(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(l.Run.Notes, "\n")
	if !strings.Contains(notes, "best within p99 latency ≤ 20ms") || !strings.Contains(out.String(), "best within p99 latency ≤ 20ms") {
		t.Errorf("no latency-bounded table in the notes and the output:\n%s\n--\n%s", notes, out.String())
	}
	for _, want := range []string{"a       randread", "a       write", "b       randread", "b       write"} {
		if !strings.Contains(notes, want) {
			t.Errorf("table has no row %q:\n%s", want, notes)
		}
	}
}
