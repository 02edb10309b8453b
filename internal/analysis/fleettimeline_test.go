package analysis

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"dbio/internal/fioformat"
	"dbio/internal/results"
)

func loadRecorded(t *testing.T, dir string) *Recorded {
	t.Helper()
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return NewRecorded(l)
}

// The fleet's IOPS line of a real three-host four-corners run is, second
// for second, what fio's own fleet series recorded in series.csv while the
// run went (both sum the hosts' logs over the seconds all of them logged),
// and each host's line holds the seconds its own log holds.
func TestDeviceFleetLineIsTheRunsFleetSeries(t *testing.T) {
	r := loadRecorded(t, filepath.Join("..", "report", "testdata", "disk-fleet-a"))
	tls, err := FleetTimelines(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tls) != 2 || tls[0].Figure.Name != results.FigureIOPS || len(tls[0].Hosts) != 3 {
		t.Fatalf("timelines %+v, want IOPS and MB/s over 3 hosts", tls)
	}
	iops := tls[0]
	col := r.Series.Column("fio_iops")
	for i, step := range iops.Steps {
		var want []float64
		for _, row := range r.Series.Rows {
			if row.Step == step {
				want = append(want, row.Values[col])
			}
		}
		got := iops.Fleet.Steps[i]
		if len(got) != len(want) {
			t.Errorf("%s: %d fleet seconds, series.csv has %d", step, len(got), len(want))
			continue
		}
		for j := range got {
			if got[j].Value != want[j] {
				t.Errorf("%s second %d: fleet %v IOPS, series.csv %v", step, j, got[j].Value, want[j])
			}
		}
		for _, h := range iops.Hosts {
			if n := len(h.Steps[i]); n < len(want) {
				t.Errorf("%s: host %s has %d seconds, fewer than the fleet's %d", step, h.Name, n, len(want))
			}
		}
	}
	if off := iops.OffsetsMS["h1"]; off != r.Run.Hosts[0].Clock[0].OffsetMS {
		t.Errorf("h1's offset %v, run.json's at the start %v", off, r.Run.Hosts[0].Clock[0].OffsetMS)
	}
}

// A tenants run's fleet line, averaged over its seconds, is the step's
// fleet figure: the hosts' means over the common window, summed.
func TestTenantsFleetLineAveragesToTheFleetFigure(t *testing.T) {
	r := loadRecorded(t, filepath.Join("..", "report", "testdata", "tenants-fleet"))
	tls, err := FleetTimelines(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tls) == 0 {
		t.Fatal("no timeline")
	}
	for _, tl := range tls {
		step := r.Workloads[0].Steps[0]
		fleet := tl.Fleet.Steps[0]
		sum := 0.0
		for _, s := range fleet {
			sum += s.Value
		}
		want, _ := step.Figure(tl.Figure.Name)
		if got := sum / float64(len(fleet)); math.Abs(got-want) > 1e-5*want || want <= 0 {
			t.Errorf("%s: the fleet line's mean %v, the step's figure %v", tl.Figure.Name, got, want)
		}
		if len(tl.Hosts) != 2 {
			t.Errorf("%s: %d host lines, want 2", tl.Figure.Name, len(tl.Hosts))
		}
	}
}

func TestFleetStepSums(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	secs := func(ms ...int) []FleetSecond {
		var out []FleetSecond
		for i, m := range ms {
			out = append(out, FleetSecond{Time: at(m), Value: float64(10 * (i + 1))})
		}
		return out
	}
	cases := []struct {
		name    string
		offsets map[string]float64
		hosts   []hostSeconds
		// want are the fleet's seconds as ms after t0 and their sums.
		wantAt  []int
		wantSum []float64
	}{
		{"the common window only", nil,
			[]hostSeconds{{"h1", secs(1000, 2000, 3000)}, {"h2", secs(2010, 3010, 4010)}},
			[]int{2000, 3000}, []float64{20 + 10, 30 + 20}},
		{"a host's second less than half a second away", nil,
			[]hostSeconds{{"h1", secs(1000, 2000)}, {"h2", secs(1400, 2400)}},
			[]int{1000, 2000}, []float64{20, 40}},
		{"a late tick and a prompt one keep their order", nil,
			[]hostSeconds{{"h1", secs(1000, 2000, 3000)}, {"h2", secs(1000, 2600, 2900)}},
			[]int{1000, 2000, 3000}, []float64{20, 40, 60}},
		// h2's clock is 3 s ahead: its seconds, 3 s later by its clock,
		// are the same seconds as h1's.
		{"clock offsets applied", map[string]float64{"h2": 3000},
			[]hostSeconds{{"h1", secs(1000, 2000)}, {"h2", secs(4000, 5000)}},
			[]int{1000, 2000}, []float64{20, 40}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := FleetTimeline{OffsetsMS: c.offsets}
			var hosts []hostSeconds
			for _, h := range c.hosts {
				hosts = append(hosts, hostSeconds{h.host, onCoordinatorClock(h.seconds, msDuration(c.offsets[h.host]))})
			}
			tl.addStep("s", hosts)
			got := tl.Fleet.Steps[0]
			if len(got) != len(c.wantAt) {
				t.Fatalf("fleet seconds %+v, want at %v", got, c.wantAt)
			}
			for i, s := range got {
				if !s.Time.Equal(at(c.wantAt[i])) || s.Value != c.wantSum[i] {
					t.Errorf("second %d: %v %v, want %v %v", i, s.Time.Sub(t0), s.Value, time.Duration(c.wantAt[i])*time.Millisecond, c.wantSum[i])
				}
			}
			if len(tl.Hosts) != len(c.hosts) {
				t.Errorf("%d host lines, want %d", len(tl.Hosts), len(c.hosts))
			}
		})
	}
}

// A host's jobs are summed second by second; fio's short final interval
// is not a second, and a second one job did not log is left out.
func TestJobSeconds(t *testing.T) {
	const t0 = 1_795_000_000_000
	log := func(pairs ...int64) []fioformat.LogSample {
		var out []fioformat.LogSample
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, fioformat.LogSample{TimeMS: pairs[i], Value: pairs[i+1]})
		}
		return out
	}
	jobs := []fioformat.JobLogs{
		{Job: "a.1", IOPS: log(t0+1000, 100, t0+2000, 110, t0+3000, 120, t0+3200, 5), BW: log(t0+1000, 400, t0+2000, 440, t0+3000, 480)},
		{Job: "a.2", IOPS: log(t0+1010, 200, t0+2010, 210), BW: log(t0+1010, 800, t0+2010, 840)},
	}
	iops, mbs := jobSeconds(jobs)
	if len(iops) != 2 || iops[0].Value != 300 || iops[1].Value != 320 {
		t.Errorf("IOPS %+v, want 300 and 320 (the third second lacks a.2, the short interval is none)", iops)
	}
	if len(mbs) != 2 || math.Abs(mbs[0].Value-1200*1024/1e6) > 1e-9 {
		t.Errorf("MB/s %+v, want 1.2288 first", mbs)
	}
}

// A job that reads and writes logs each direction apart: a second in
// which it logged its reads but not its writes is left out, as one job
// missing would be, rather than counted short of the writes.
func TestJobSecondsOfAMixedJob(t *testing.T) {
	const t0 = 1_795_000_000_000
	sample := func(ms, v int64, dir int) fioformat.LogSample {
		return fioformat.LogSample{TimeMS: t0 + ms, Value: v, Dir: dir}
	}
	jobs := []fioformat.JobLogs{{Job: "mixed.1",
		IOPS: []fioformat.LogSample{sample(1000, 70, 0), sample(1000, 30, 1), sample(2000, 72, 0), sample(3000, 68, 0), sample(3000, 32, 1)},
		BW:   []fioformat.LogSample{sample(1000, 280, 0), sample(1000, 120, 1), sample(2000, 288, 0), sample(3000, 272, 0), sample(3000, 128, 1)}}}
	iops, _ := jobSeconds(jobs)
	var got []float64
	for _, s := range iops {
		got = append(got, s.Value)
	}
	if want := []float64{100, 100}; !slices.Equal(got, want) {
		t.Errorf("IOPS %v, want %v (the second without the job's writes left out)", got, want)
	}
}

// Backups a host's noisy-neighbour phase recorded are marked on the
// coordinator's clock.
func TestHostBackups(t *testing.T) {
	steps := []results.Step{{Name: "interference", Kind: results.KindNoisyPrefix + "interference", Noisy: &results.NoisyDetail{Phase: "interference", Backups: []results.NoisyBackup{
		{Tenant: "t3", Cycle: 1, Start: time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC), Seconds: 4.5},
		{Tenant: "t3", Cycle: 2, Start: time.Date(2026, 11, 22, 10, 0, 20, 0, time.UTC), Seconds: 3, Error: "disk full"}}}},
		{Name: "users-1"}}
	marks := hostBackups("h1", steps, 1500)
	if len(marks) != 2 {
		t.Fatalf("marks %+v, want 2", marks)
	}
	if want := time.Date(2026, 11, 22, 10, 0, 3, 500_000_000, time.UTC); !marks[0].From.Equal(want) || marks[0].Seconds != 4.5 || marks[0].Host != "h1" {
		t.Errorf("first mark %+v, want h1 from %v for 4.5 s", marks[0], want)
	}
	if marks[1].What != "backup of t3 (failed)" {
		t.Errorf("second mark says %q", marks[1].What)
	}
}

// shiftedTenantsRun copies the recorded tenants run and moves host h2 as
// if its clock had been ahead of the coordinator's by ahead: its run's
// start and its rows' times of day are that much later. When record is
// set, run.json records the offset at the start (and h1's, 0), as a run
// that measured the hosts' clocks does. Row lateRow of h2's step is
// delivered 600 ms late, a tick its ticker owed.
func shiftedTenantsRun(t *testing.T, ahead time.Duration, record bool, lateRow int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "report", "testdata", "tenants-fleet"))); err != nil {
		t.Fatal(err)
	}
	h2 := filepath.Join(dir, "hosts", "h2", "20261127-070604-tenants-h2")
	editJSON(t, filepath.Join(h2, "run.json"), func(run map[string]any) {
		started, err := time.Parse(time.RFC3339Nano, run["started"].(string))
		if err != nil {
			t.Fatal(err)
		}
		run["started"] = started.Add(ahead).Format(time.RFC3339Nano)
	})
	b, err := os.ReadFile(filepath.Join(h2, "series.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows[1:] {
		at, err := time.Parse(time.RFC3339, row[0])
		if err != nil {
			t.Fatal(err)
		}
		elapsed, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		if i == lateRow {
			elapsed += 0.6
			at = at.Add(600 * time.Millisecond)
		}
		row[0], row[1] = at.Add(ahead).Truncate(time.Second).Format(time.RFC3339), strconv.FormatFloat(elapsed, 'f', 3, 64)
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h2, "series.csv"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if record {
		editJSON(t, filepath.Join(dir, "run.json"), func(run map[string]any) {
			for _, h := range run["tenants"].(map[string]any)["hosts"].([]any) {
				h := h.(map[string]any)
				off := 0.0
				if h["host"] == "h2" {
					off = float64(ahead) / float64(time.Millisecond)
				}
				h["clock"] = []any{
					map[string]any{"at": "start", "measured": "2026-11-27T07:06:10Z", "offset_ms": off, "round_trip_ms": 0.4, "tries": 5},
					// The end's reading is not what the run placed the host by.
					map[string]any{"at": "end", "measured": "2026-11-27T07:06:30Z", "offset_ms": off + 900, "round_trip_ms": 0.4, "tries": 5},
				}
			}
		})
	}
	return dir
}

func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A host whose clock is 20 s ahead, with the offset recorded, and one of
// whose ticks came late, is drawn on the coordinator's clock: the fleet's
// line is, second for second, the one the hosts drew with their clocks
// agreeing, its mean over the step is the step's recorded fleet figure,
// and the fleet's figures computed from the moved hosts (as the run
// computes them) come out the same. Without the offset recorded, the
// host's seconds are placed by its own clock and share none with the
// other's.
func TestTenantsTimelineOnTheCoordinatorsClock(t *testing.T) {
	const ahead = 20 * time.Second
	original := loadRecorded(t, filepath.Join("..", "report", "testdata", "tenants-fleet"))
	want, err := FleetTimelines(original)
	if err != nil {
		t.Fatal(err)
	}
	step := original.Workloads[0].Steps[0]
	detail := step.Fleet
	if detail == nil {
		t.Fatalf("step %s: no fleet detail", step.Name)
	}

	moved := loadRecorded(t, shiftedTenantsRun(t, ahead, true, 2))
	// The testdata's run read series.csv's times to the second; its window
	// is recomputed to the millisecond, as a run now records it.
	window, _ := recomputedFleet(t, moved)
	got, err := FleetTimelines(moved)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != 3 {
		t.Fatalf("%d timelines, the original run has %d; want TPM, NOPM and TPS", len(got), len(want))
	}
	for i, tl := range got {
		if off := tl.OffsetsMS["h2"]; off != 20000 {
			t.Errorf("%s: h2's offset %v ms, want the start's 20000", tl.Figure.Name, off)
		}
		line, wantLine := tl.Fleet.Steps[0], want[i].Fleet.Steps[0]
		if len(line) != len(wantLine) || len(line) != detail.Seconds {
			t.Fatalf("%s: %d fleet seconds, the original's %d, the step's window %d s", tl.Figure.Name, len(line), len(wantLine), detail.Seconds)
		}
		if !line[0].Time.Equal(window.WindowStart) || !line[len(line)-1].Time.Equal(window.WindowEnd) {
			t.Errorf("%s: the line runs %s to %s, the fleet's window %s to %s", tl.Figure.Name, line[0].Time, line[len(line)-1].Time, window.WindowStart, window.WindowEnd)
		}
		sum := 0.0
		for j, s := range line {
			if !s.Time.Equal(wantLine[j].Time) || math.Abs(s.Value-wantLine[j].Value) > 1e-9 {
				t.Errorf("%s second %d: %s %v, the original's %s %v", tl.Figure.Name, j, s.Time, s.Value, wantLine[j].Time, wantLine[j].Value)
			}
			sum += s.Value
		}
		figure, _ := step.Figure(tl.Figure.Name)
		if mean := sum / float64(len(line)); math.Abs(mean-figure) > 1e-6*figure || figure <= 0 {
			t.Errorf("%s: the fleet line's mean %v, the step's figure %v", tl.Figure.Name, mean, figure)
		}
	}

	// The fleet's figures from the moved hosts' seconds come out as the run
	// recorded them from the hosts whose clocks agreed.
	rec, fleetFigs := recomputedFleet(t, moved)
	if wantRec, _ := recomputedFleet(t, original); rec.Seconds != detail.Seconds || !rec.WindowStart.Equal(wantRec.WindowStart) {
		t.Errorf("the moved hosts' window: %d s from %s, the original's %d s from %s", rec.Seconds, rec.WindowStart, detail.Seconds, wantRec.WindowStart)
	}
	for _, f := range fleetFigs {
		if v, _ := step.Figure(f.Name); v != f.Value {
			t.Errorf("%s: the moved hosts' fleet figure %v, the step's %v", f.Name, f.Value, v)
		}
	}

	unplaced, err := FleetTimelines(loadRecorded(t, shiftedTenantsRun(t, ahead, false, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range unplaced {
		if len(tl.OffsetsMS) != 0 || len(tl.Fleet.Steps[0]) != 0 {
			t.Errorf("%s without offsets: offsets %v and %d fleet seconds, want none (h2 20 s ahead by its own clock)", tl.Figure.Name, tl.OffsetsMS, len(tl.Fleet.Steps[0]))
		}
	}
}

// recomputedFleet is a tenants run's first fleet step folded again from
// its hosts' directories, as the run folds them: its record and figures.
func recomputedFleet(t *testing.T, r *Recorded) (results.TenantFleet, []results.Figure) {
	t.Helper()
	fold, err := FoldTenants(r.Path, *r.Run.Tenants, false)
	if err != nil {
		t.Fatal(err)
	}
	s := fold.Steps[0].Step
	return *s.Fleet, s.Figures
}
