package analysis

import (
	"math"
	"path/filepath"
	"testing"
	"time"

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
	log := func(pairs ...int64) []results.FioLogSample {
		var out []results.FioLogSample
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, results.FioLogSample{TimeMS: pairs[i], Value: pairs[i+1]})
		}
		return out
	}
	jobs := []results.FioJobLog{
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

// Backups a host's noisy-neighbour phase recorded are marked on the
// coordinator's clock.
func TestHostBackups(t *testing.T) {
	steps := []results.Step{{Name: "interference", Detail: []byte(`{"phase":"interference","backups":[{"tenant":"t3","cycle":1,"start":"2026-11-22T10:00:05Z","seconds":4.5},{"tenant":"t3","cycle":2,"start":"2026-11-22T10:00:20Z","seconds":3,"error":"disk full"}]}`)},
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
