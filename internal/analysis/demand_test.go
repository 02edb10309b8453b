package analysis

import (
	"math"
	"testing"

	"dbio/internal/results"
)

func TestDeviceDemandJoinsTheBusiestStepWithFio(t *testing.T) {
	fioPoint := func(name, rw string, bs int64, iops float64, status results.Status) results.Step {
		return results.Step{Name: name, Kind: results.KindFio, Status: status,
			Figures: []results.Figure{{Name: results.FigureIOPS, Value: iops}},
			Fio:     &results.FioPoint{FioPlan: results.FioPlan{Name: name, RW: rw, BS: bs}, Status: status}}
	}
	step := func(users int, wps, rps float64) results.Step {
		return results.Step{Users: users, Telemetry: &results.TelemetrySummary{Devices: []string{"vda"}, Metrics: map[string]results.TelemetryStat{
			"disk_vda_util_pct": {Mean: 50, Samples: 5}, "disk_vda_wps": {Mean: wps, Samples: 5}, "disk_vda_rps": {Mean: rps, Samples: 5}}}}
	}
	fio := []results.Step{
		fioPoint("64k-randwrite", "randwrite", 65536, 9000, results.StatusCompleted),
		fioPoint("4k-randwrite", "randwrite", 4096, 20000, results.StatusCompleted),
		fioPoint("4k-randwrite-failed", "randwrite", 4096, 90000, results.StatusFailed),
		fioPoint("128k-read", "read", 131072, 3000, results.StatusCompleted),
	}
	steps := []results.Step{step(1, 1000, 10), step(4, 4000, 30), step(8, 3000, 50)}
	got := DeviceDemand(fio, steps)
	if len(got) != 1 {
		t.Fatalf("demands %+v: want writes only (no random-read point)", got)
	}
	d := got[0]
	if !d.Write || d.Users != 4 || d.Device != "vda" || d.PerS != 4000 || d.Point != "4k-randwrite" || d.Capacity != 20000 || math.Abs(d.SharePct()-20) > 1e-9 {
		t.Errorf("demand %+v, share %v", d, d.SharePct())
	}
	if got := DeviceDemand(fio, []results.Step{{Users: 1}}); len(got) != 0 {
		t.Errorf("steps without device samples gave %+v", got)
	}
}
