package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// point is a completed fio step with its figures and record.
func point(label, series, name string, iops, mbs, meanUS, p99US float64) results.Step {
	return results.Step{Name: name, Kind: results.KindFio, Status: results.StatusCompleted,
		Figures: []results.Figure{{Name: results.FigureIOPS, Value: iops}, {Name: results.FigureMBPerSec, Value: mbs},
			{Name: results.FigureLatMeanUS, Value: meanUS}, {Name: results.FigureLatP99US, Value: p99US}},
		Fio: &results.FioPoint{FioPlan: results.FioPlan{Name: name, Series: series, Label: label, RW: "randread", BS: 4096}, Status: results.StatusCompleted}}
}

func TestBoundOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  results.RunConfig
		want LatencyBound
		set  bool
	}{
		{"nothing set: 20 ms mean", results.RunConfig{}, LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatMean}, false},
		{"a bound", results.RunConfig{Disk: &results.DiskConfig{LatencyMax: "5ms"}}, LatencyBound{Max: 5 * time.Millisecond, Stat: results.StatMean}, true},
		{"a statistic", results.RunConfig{Disk: &results.DiskConfig{LatencyStat: results.StatP99}}, LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatP99}, true},
		{"a statistic dbio does not know reads as the mean", results.RunConfig{Disk: &results.DiskConfig{LatencyStat: "p42"}}, LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatMean}, true},
		{"an unreadable bound is the default", results.RunConfig{Disk: &results.DiskConfig{LatencyMax: "soon"}}, LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatMean}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, set := BoundOf(tc.cfg); got != tc.want || set != tc.set {
				t.Errorf("got %v %v, want %v %v", got, set, tc.want, tc.set)
			}
		})
	}
	if s := (LatencyBound{Max: 20 * time.Millisecond, Stat: results.StatP99}).String(); s != "p99 latency ≤ 20ms" {
		t.Errorf("String() = %q", s)
	}
}

// Highest reads each target's best points over every pattern, a tie going
// to the point that ran first.
func TestHighestTiesGoToTheEarlierPoint(t *testing.T) {
	points := []results.Step{
		point("nvme", "read", "a", 100, 1, 10, 20),
		point("sata", "read", "b", 50, 9, 10, 20),
		point("nvme", "write", "c", 300, 2, 10, 20),
		point("nvme", "read", "d", 300, 2, 10, 20),
	}
	rows := Highest(points)
	if len(rows) != 2 || rows[0].Label != "nvme" || rows[0].BestIOPS.Name != "c" || rows[0].BestMBPerSec.Name != "c" || rows[0].Points != 3 || rows[1].BestMBPerSec.Name != "b" {
		t.Errorf("rows %+v", rows)
	}
}

// A point whose statistic fio did not report is not within any bound.
func TestBestWithinNeedsTheStatistic(t *testing.T) {
	p := point("nvme", "read", "a", 100, 1, 10, math.NaN())
	p.Figures = p.Figures[:3]
	rows := BestWithin([]results.Step{p}, LatencyBound{Max: time.Second, Stat: results.StatP99})
	if len(rows) != 1 || rows[0].Points != 1 || rows[0].Within != 0 {
		t.Errorf("rows %+v", rows)
	}
}

func TestVersusBaseline(t *testing.T) {
	step := func(tps float64) *results.Step {
		return &results.Step{Figures: []results.Figure{{Name: results.FigureTPS, Value: tps}}}
	}
	rows := []Row{
		{Label: "1", Steps: []*results.Step{step(10), step(20), nil}},
		{Label: "2", Steps: []*results.Step{step(30), step(15), step(60)}},
		{Label: "4", Steps: []*results.Step{nil, step(5), step(5)}},
	}
	v, ok := VersusBaseline(FigureMetric(results.FigureTPS.Def()), rows, 3)
	if !ok {
		t.Fatal("nothing to compare")
	}
	b1 := v.Against[0][0]
	if b1.Differential != 10 || b1.Ratio != 2 || b1.ChangePct != 100 || b1.ImprovementPct != 100 {
		t.Errorf("B at 1 user: %+v", b1)
	}
	if c := v.Against[0][1]; !math.IsNaN(c.B.Mean) || !math.IsNaN(c.ChangePct) {
		t.Errorf("C lacks 1 user: %+v", c)
	}
	// B's average is over 1 and 2 users (A has no 4), C's over 2 users alone.
	if a := v.Averages[0]; a.Rows != 2 || a.A.Mean != 20 || a.B.Mean != 17.5 || a.ChangePct != -12.5 {
		t.Errorf("B's average %+v", a)
	}
	if a := v.Averages[1]; a.Rows != 1 || a.A.Mean != 30 || a.B.Mean != 60 {
		t.Errorf("C's average %+v", a)
	}
}

func TestCompareJudgesByDirectionAndFloor(t *testing.T) {
	tps := FigureMetric(results.FigureTPS.Def())
	latency := ResponseTime(results.StatMean)
	iowait := telemetryMetric("cpu-iowait", "CPU iowait", "%", results.LowerBetter, "cpu_iowait_pct")
	idle := telemetryMetric("cpu-idle", "CPU idle", "%", results.NeitherBetter, "cpu_idle_pct")
	cases := []struct {
		name       string
		m          Metric
		a, b       float64
		want       Judgement
		underFloor bool
	}{
		{"throughput up", tps, 100, 150, Improved, false},
		{"throughput down", tps, 100, 97, Worsened, false},
		{"throughput within 1 %", tps, 100, 100.5, Unchanged, false},
		{"latency fell", latency, 10, 4.2, Improved, false},
		{"latency rose", latency, 4.2, 10, Worsened, false},
		{"from zero has no % but a direction", tps, 0, 5, Improved, false},
		{"iowait to near zero", iowait, 7.3, 0.2, Improved, true},
		{"idle noise under the floor", idle, 0.0, 0.7, Unchanged, true},
		{"idle neither better", idle, 20, 40, WentHigher, false},
		{"idle fell", idle, 40, 20, WentLower, false},
		{"no value", tps, math.NaN(), 5, NoValue, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Compare(Side{Mean: c.a}, Side{Mean: c.b}, c.m)
			if d.Judgement != c.want || d.UnderFloor != c.underFloor {
				t.Errorf("Compare(%v, %v) = %s, under floor %v; want %s, %v", c.a, c.b, d.Judgement.Word(), d.UnderFloor, c.want.Word(), c.underFloor)
			}
			if d.UnderFloor && !(math.IsNaN(d.Ratio) && math.IsNaN(d.ChangePct)) {
				t.Errorf("under the floor the ratio (%v) and change (%v) must be left out", d.Ratio, d.ChangePct)
			}
		})
	}
}

// A run's headlines are the peak step's throughput figures per workload and
// the fio point with the most IOPS; a run with no finished step has none.
func TestHeadlines(t *testing.T) {
	step := func(users int, tpm, nopm float64) results.Step {
		return results.Step{Users: users, Kind: "tpcc", Status: results.StatusCompleted, Total: &metrics.TxSummary{},
			Figures: []results.Figure{{Name: results.FigureTPM, Value: tpm}, {Name: results.FigureNOPM, Value: nopm}}}
	}
	fioPoint := func(name string, iops float64) results.Step {
		return results.Step{Name: name, Kind: results.KindFio, Status: results.StatusCompleted, Figures: []results.Figure{{Name: results.FigureIOPS, Value: iops}}}
	}
	l := &results.Loaded{Steps: []results.Step{fioPoint("4k-randread", 900), fioPoint("4k-randwrite", 1200), step(1, 100, 45), step(2, 180, 80), step(4, 150, 70)}}
	hs := Headlines(NewRecorded(l))
	if len(hs) != 2 || hs[0].Kind != "tpcc" || hs[0].Users != 2 || hs[0].Values[0] != 180 || hs[0].Values[1] != 80 ||
		hs[1].Kind != "fio" || hs[1].Point != "4k-randwrite" || hs[1].Values[0] != 1200 {
		t.Errorf("headlines %+v", hs)
	}
	if hs := Headlines(NewRecorded(&results.Loaded{})); len(hs) != 0 {
		t.Errorf("a run with no step has headlines %+v", hs)
	}
}

// A comparison warns when one run shared its machine with much more other
// work than the baseline; a quiet difference is not worth a warning.
func TestBackgroundWarning(t *testing.T) {
	run := func(user, system, dbio, server, steal float64, load ...float64) *Recorded {
		var steps []results.Step
		for i := range max(len(load), 1) {
			tel := &results.TelemetrySummary{CPUs: 4, Metrics: map[string]results.TelemetryStat{
				"cpu_user_pct": {Mean: user, Samples: 5}, "cpu_system_pct": {Mean: system, Samples: 5},
				"proc_dbio_cpu_pct": {Mean: dbio, Samples: 5}, "proc_server_cpu_pct": {Mean: server, Samples: 5},
				"cpu_steal_pct": {Mean: steal, Samples: 5}}}
			if i < len(load) {
				tel.Metrics["load_1m"] = results.TelemetryStat{Mean: load[i], Samples: 5}
			}
			steps = append(steps, results.Step{Users: i + 1, Kind: "tpcc", Total: &metrics.TxSummary{}, Telemetry: tel})
		}
		return NewRecorded(&results.Loaded{Steps: steps})
	}
	quiet := run(40, 10, 30, 18, 0, 1, 2) // 2 % others
	same := run(42, 11, 31, 19, 0.5, 9)   // 3 % others, a load far higher (its own tasks)
	busy := run(70, 15, 30, 20, 0, 6)     // 35 % others
	if bg := BackgroundOf(busy); bg.Steps != 1 || bg.OthersCPU != 35 || bg.Load != 6 || bg.CPUs != 4 {
		t.Errorf("background %+v, want 35 %% others and a load of 6 on 4 CPUs", bg)
	}
	if bg := BackgroundOf(quiet); bg.Load != 1.5 {
		t.Errorf("load %v, want the mean of the steps' 1 and 2", bg.Load)
	}
	if bg := BackgroundOf(run(40, 10, 30, 18, 0)); !math.IsNaN(bg.Load) {
		t.Errorf("a run recorded without the load average has a load of %v, want NaN (unknown)", bg.Load)
	}
	// fio's own CPU during a device pass is not another process's load.
	withFio := busy
	withFio.Fio = []results.Step{{Kind: results.KindFio, Telemetry: &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
		"cpu_user_pct": {Mean: 5, Samples: 5}, "cpu_system_pct": {Mean: 60, Samples: 5}, "proc_dbio_cpu_pct": {Mean: 1, Samples: 5}}}}}
	if bg := BackgroundOf(withFio); bg.Steps != 1 || bg.OthersCPU != 35 {
		t.Errorf("background with a fio pass %+v, want the database steps' 35 %% alone", bg)
	}
	if w := backgroundWarning("A", "B", BackgroundOf(quiet), BackgroundOf(same)); w != "" {
		t.Errorf("a quiet difference warned: %s", w)
	}
	w := backgroundWarning("A", "B", BackgroundOf(quiet), BackgroundOf(busy))
	if !strings.Contains(w, "other processes used 2 % and 35 % of the CPUs") || !strings.Contains(w, "the load average was 1.5 and 6.0 (their own tasks included)") {
		t.Errorf("warning %q", w)
	}
}

// The ramp-ups of a run that ended them at steady state: how many got there,
// after how long, and which were measured without.
func TestSteadyWarmups(t *testing.T) {
	step := func(users int, w *results.SteadyWarmup) results.Step {
		return results.Step{Name: "users", Users: users, Kind: "tpcc", Warmup: w}
	}
	got, ok := SteadyWarmups([]results.Step{
		step(1, &results.SteadyWarmup{Criterion: "nopm_slope:0.5%", WindowS: 20, LimitS: 300, Reached: true, AtS: 41}),
		step(2, &results.SteadyWarmup{Criterion: "nopm_slope:0.5%", WindowS: 20, LimitS: 300, Reached: true, AtS: 23}),
		step(4, &results.SteadyWarmup{Criterion: "nopm_slope:0.5%", WindowS: 20, LimitS: 300}),
		step(8, &results.SteadyWarmup{Criterion: "nopm_slope:0.5%", WindowS: 20, LimitS: 300, Reached: true, AtS: 30}),
	})
	if !ok || got.Criterion != "nopm_slope:0.5%" || got.WindowS != 20 || len(got.Steps) != 4 || got.Reached != 3 ||
		got.Shortest != 23 || got.Longest != 41 || len(got.NotReached) != 1 || got.NotReached[0].Users != 4 {
		t.Errorf("warm-ups %+v", got)
	}
	if _, ok := SteadyWarmups([]results.Step{step(1, nil)}); ok {
		t.Error("a run with fixed ramp-ups reads as one that watched for steady state")
	}
}
