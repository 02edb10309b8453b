package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"dbio/internal/results"
)

// fioStep is a recorded fio point with fio's completion latency in µs.
func fioStep(name, series string, bs int64, writeThrough bool, status results.Status, p50, p99, mean float64) results.Step {
	return results.Step{Name: name, Kind: results.KindFio, Status: status,
		Fio: &results.FioPoint{FioPlan: results.FioPlan{Name: name, Series: series, RW: "write", BS: bs, IODepth: 1, Jobs: 1,
			WriteThrough: writeThrough, Label: "disk", Targets: []string{"/srv/data"}}},
		Figures: []results.Figure{{Name: results.FigureIOPS, Value: 1e6 / mean}, {Name: results.FigureLatP50US, Value: p50},
			{Name: results.FigureLatP99US, Value: p99}, {Name: results.FigureLatMeanUS, Value: mean}}}
}

// syncStep is a workload step whose database timed its log syncs: per
// second, syncs and their wait (the counters' rates) and the second's
// mean wait per sync, summarized over the step as the sampler does.
func syncStep(users int, syncsPerS, waitMsPerS, perSecondP99 float64) results.Step {
	ops, wait := results.DBWaitSync.Rates()
	t := &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
		ops:                            {Mean: syncsPerS, P99: syncsPerS, Samples: 20},
		wait:                           {Mean: waitMsPerS, P99: waitMsPerS, Samples: 20},
		results.DBWaitSync.Await():     {Mean: waitMsPerS / syncsPerS, P99: perSecondP99, Samples: 20},
		results.DBWaitRead.Await():     {Mean: 9, P99: 12, Samples: 20},
		"engine_checkpoints_per_s":     {Mean: 0.1, Samples: 20},
		results.DBWaitLogWrite.Await(): {Mean: 0.05, P99: 0.1, Samples: 20},
	}}
	return results.Step{Name: fmt.Sprintf("users-%d", users), Users: users, Telemetry: t}
}

func TestLogWriteJoin(t *testing.T) {
	corner := fioStep("64k-write", "64k-write", 64<<10, false, results.StatusCompleted, 300, 900, 350)
	lw8 := fioStep("8k-log-write", results.FioSeriesLogWrite, 8<<10, true, results.StatusCompleted, 120, 400, 150)
	lw16 := fioStep("16k-log-write", results.FioSeriesLogWrite, 16<<10, true, results.StatusCompleted, 160, 520, 190)
	failed16 := fioStep("16k-log-write", results.FioSeriesLogWrite, 16<<10, true, results.StatusFailed, 0, 0, 0)
	// A point of the log-write series without O_DSYNC is not a log write.
	noSync := fioStep("8k-log-write", results.FioSeriesLogWrite, 8<<10, false, results.StatusCompleted, 20, 60, 25)
	sqlite := results.Step{Name: "users-1", Users: 1, Telemetry: &results.TelemetrySummary{Metrics: map[string]results.TelemetryStat{
		"cpu_busy_pct": {Mean: 50, Samples: 20}}}}
	data := results.TargetInfo{Role: "data", Path: "/srv/data", Storage: results.Storage{DevNumber: "259:1"}}
	logOn := func(path, dev string) []results.TargetInfo {
		return []results.TargetInfo{data, {Role: "log", Path: path, Storage: results.Storage{DevNumber: dev}}}
	}
	for _, tc := range []struct {
		name      string
		fio       []results.Step
		steps     []results.Step
		targets   []results.TargetInfo
		points    []string
		reference string
		want      []LogSyncStep
		slowest   int
		elsewhere string
	}{
		{name: "a quick run on PostgreSQL: each step against the 8k point", fio: []results.Step{corner, lw16, lw8},
			steps:  []results.Step{syncStep(1, 400, 400*0.6, 0.9), syncStep(4, 900, 900*1.9, 2.4), syncStep(2, 700, 700*1.2, 1.5)},
			points: []string{"16k-log-write", "8k-log-write"}, reference: "8k-log-write",
			want: []LogSyncStep{
				{Name: "users-1", Users: 1, MeanMS: 0.6, PerSecondP99MS: 0.9, SyncsPerS: 400, BeyondDeviceMS: 0.45},
				{Name: "users-4", Users: 4, MeanMS: 1.9, PerSecondP99MS: 2.4, SyncsPerS: 900, BeyondDeviceMS: 1.75},
				{Name: "users-2", Users: 2, MeanMS: 1.2, PerSecondP99MS: 1.5, SyncsPerS: 700, BeyondDeviceMS: 1.05},
			}, slowest: 1},
		{name: "a log target on the measured filesystem is joined", fio: []results.Step{lw8}, targets: logOn("/srv/data/wal", "259:1"),
			steps: []results.Step{syncStep(4, 900, 900*1.9, 2.4)}, points: []string{"8k-log-write"}, reference: "8k-log-write",
			want: []LogSyncStep{{Name: "users-4", Users: 4, MeanMS: 1.9, PerSecondP99MS: 2.4, SyncsPerS: 900, BeyondDeviceMS: 1.75}}},
		{name: "a log target on other storage is not: the point measured the data's", fio: []results.Step{lw8, lw16}, targets: logOn("/srv/wal", "259:2"),
			steps: []results.Step{syncStep(4, 900, 900*1.9, 2.4)}, points: []string{"8k-log-write", "16k-log-write"}, reference: "8k-log-write",
			slowest: -1, elsewhere: "/srv/wal"},
		{name: "a log target whose storage was not resolved is not joined", fio: []results.Step{lw8}, targets: logOn("/srv/wal", ""),
			steps: []results.Step{syncStep(4, 900, 900*1.9, 2.4)}, points: []string{"8k-log-write"}, reference: "8k-log-write",
			slowest: -1, elsewhere: "/srv/wal"},
		{name: "syncs no slower than the device's log writes", fio: []results.Step{lw8, lw16},
			steps:  []results.Step{syncStep(1, 100, 100*0.3, 0.35), syncStep(2, 100, 100*0.1, 0.12)},
			points: []string{"8k-log-write", "16k-log-write"}, reference: "8k-log-write",
			want: []LogSyncStep{
				{Name: "users-1", Users: 1, MeanMS: 0.3, PerSecondP99MS: 0.35, SyncsPerS: 100, BeyondDeviceMS: 0.15, WithinDevice: true},
				{Name: "users-2", Users: 2, MeanMS: 0.1, PerSecondP99MS: 0.12, SyncsPerS: 100, BeyondDeviceMS: 0, WithinDevice: true},
			}, slowest: 0},
		{name: "a failed 8k point leaves the 16k one as the reference", fio: []results.Step{fioStep("8k-log-write", results.FioSeriesLogWrite, 8<<10, true, results.StatusFailed, 0, 0, 0), lw16},
			steps: []results.Step{syncStep(1, 100, 100*0.69, 0.8)}, points: []string{"16k-log-write"}, reference: "16k-log-write",
			want: []LogSyncStep{{Name: "users-1", Users: 1, MeanMS: 0.69, PerSecondP99MS: 0.8, SyncsPerS: 100, BeyondDeviceMS: 0.5}}},
		{name: "SQLite times no log syncs: the points alone", fio: []results.Step{lw8, failed16}, steps: []results.Step{sqlite},
			points: []string{"8k-log-write"}, reference: "8k-log-write", slowest: -1},
		{name: "a disk run: no workload step", fio: []results.Step{corner, lw8, lw16},
			points: []string{"8k-log-write", "16k-log-write"}, reference: "8k-log-write", slowest: -1},
		{name: "no log-write point (a run recorded before them): nothing to join", fio: []results.Step{corner, noSync},
			steps: []results.Step{syncStep(4, 900, 900*1.9, 2.4)}, slowest: -1},
		{name: "no fio pass at all", steps: []results.Step{syncStep(4, 900, 900*1.9, 2.4)}, slowest: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			targets := tc.targets
			if targets == nil {
				targets = []results.TargetInfo{data}
			}
			j := LogWriteJoin(tc.fio, tc.steps, targets)
			if j.LogElsewhere != tc.elsewhere {
				t.Errorf("log elsewhere %q, want %q", j.LogElsewhere, tc.elsewhere)
			}
			var names []string
			for _, p := range j.Points {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, tc.points) {
				t.Errorf("points %v, want %v", names, tc.points)
			}
			switch {
			case tc.reference == "" && j.Reference != nil:
				t.Errorf("reference %s, want none", j.Reference.Name)
			case tc.reference != "" && (j.Reference == nil || j.Reference.Name != tc.reference):
				t.Errorf("reference %+v, want %s", j.Reference, tc.reference)
			}
			if len(j.Steps) != len(tc.want) {
				t.Fatalf("steps %+v, want %+v", j.Steps, tc.want)
			}
			for i, got := range j.Steps {
				w := tc.want[i]
				if got.Name != w.Name || got.Users != w.Users || !near(got.MeanMS, w.MeanMS) || !near(got.PerSecondP99MS, w.PerSecondP99MS) ||
					!near(got.SyncsPerS, w.SyncsPerS) || !near(got.BeyondDeviceMS, w.BeyondDeviceMS) || got.WithinDevice != w.WithinDevice {
					t.Errorf("step %d: %+v, want %+v", i, got, w)
				}
			}
			slowest, ok := j.Slowest()
			if ok != (tc.slowest >= 0) || (ok && slowest.Name != tc.want[tc.slowest].Name) {
				t.Errorf("slowest %+v (%v), want step %d", slowest, ok, tc.slowest)
			}
		})
	}
}

// The reference point's figures are fio's, read from the step's figures.
func TestLogWritePointFigures(t *testing.T) {
	j := LogWriteJoin([]results.Step{fioStep("8k-log-write", results.FioSeriesLogWrite, 8<<10, true, results.StatusCompleted, 120, 400, 160)}, nil, nil)
	p := j.Points[0]
	if p.P50US != 120 || p.P99US != 400 || p.MeanUS != 160 || p.IOPS != 6250 || p.BS != 8<<10 || p.Label != "disk" || p.Writers != 1 {
		t.Errorf("%+v", p)
	}
}

func near(a, b float64) bool {
	return a == b || math.Abs(a-b) < 1e-9 || (math.IsNaN(a) && math.IsNaN(b))
}
