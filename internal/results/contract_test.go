package results

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A step written with its typed records reads back as the same records: the
// telemetry summary, and the detail of each kind that has one.
func TestStepRecordsRoundTrip(t *testing.T) {
	d, err := Create(t.TempDir(), "records", Run{Kind: "disk"}, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	tel := &TelemetrySummary{Samples: 3, CPUs: 2, Devices: []string{"vda"}, InProcessEngine: true,
		Metrics: map[string]TelemetryStat{"cpu_idle_pct": {Mean: 40, P99: 70, Max: 71, Samples: 3}},
		Verdict: Verdict{Kind: VerdictNone, Text: "Neither CPU nor storage is saturated: idle 40 %"}}
	fio := &FioPoint{Step: 0, FioPlan: FioPlan{Name: "randread-4k", Series: "randread", RW: "randread", BS: 4096, IODepth: 32, Jobs: 1,
		SteadyState: "iops_slope:0.3%", SteadyWindowS: 60, Label: "nvme", Targets: []string{"/mnt/nvme"}},
		Status: StatusCompleted, FioDirections: FioDirections{Total: &FioDirection{IOPS: 1000, BytesPerSec: 4096000, Completion: FioLatency{MeanUS: 31, Percentiles: []FioPercentile{{P: 99, US: 80}}}}},
		Steady: &FioSteadyState{Criterion: "iops_slope:0.300000%", WindowS: 60, Attained: true, Value: "-0.12%", WindowIOPSMean: 998}}
	verified := true
	at := time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC)
	steps := []Step{
		{Index: 0, Name: "randread-4k", Kind: KindFio, Status: StatusCompleted, Figures: []Figure{{Name: FigureIOPS, Value: 1000, Unit: "IOPS"}}, Telemetry: tel, Fio: fio},
		{Index: 1, Name: "backup-1", Kind: KindBackup, Status: StatusCompleted, Backup: &BackupDetail{Op: "backup", Cycle: 1, Tool: "pg_basebackup", Bytes: 1 << 20,
			PerSec: []float64{0.5, 0.5}, Latency: map[string]LatencySpread{"vda_w_await": {Mean: 1, P99: 2, Max: 3}}}},
		{Index: 2, Name: "restore-1", Kind: KindRestore, Status: StatusCompleted, Backup: &BackupDetail{Op: "restore", Cycle: 1,
			Rows: map[string]int64{"item": 100000}, Checks: []Check{{Name: "rows in item", Passed: true}}, Verified: &verified}},
		{Index: 3, Name: "noisy", Kind: KindNoisyPrefix + "noisy", Status: StatusCompleted, Noisy: &NoisyDetail{Phase: "noisy",
			Tenants: []NoisyTenant{{Name: "t1", TPM: 600, NOPM: 270, P99MS: 12, VsQuietPct: -20}},
			Backups: []NoisyBackup{{Tenant: "t2", Cycle: 1, Start: at, Seconds: 4, Bytes: 1 << 20, MBPerS: 0.26}}}},
		{Index: 4, Name: "users-1", Kind: "tpcc", Status: StatusCompleted, Notes: []string{"the fleet's figures"}, Fleet: &TenantFleet{WindowStart: at, WindowEnd: at.Add(7 * time.Second), Seconds: 8,
			Hosts: []TenantHostStep{{Host: "h1", Step: "hosts/h1/run/steps/00-users-1", Figures: []Figure{{Name: FigureTPM, Value: 600, Unit: "tx/min"}}}}}},
		{Index: 5, Name: "users-2", Kind: "tpcc", Status: StatusCompleted},
	}
	for _, s := range steps {
		if err := d.WriteStep(s, nil); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range steps {
		if got := l.Steps[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("step %s read back as\n%+v\nwant\n%+v", want.Name, got, want)
		}
	}
}

// A step's detail stands where it always stood, before its notes, so that
// summary.json's bytes stay as earlier dbio versions wrote them.
func TestStepDetailBeforeNotes(t *testing.T) {
	b, err := json.Marshal(Step{Name: "backup-1", Kind: KindBackup, Backup: &BackupDetail{Op: "backup"}, Notes: []string{"n"}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if d, n := strings.Index(got, `"detail":`), strings.Index(got, `"notes":`); d < 0 || n < d || strings.Count(got, `"notes":`) != 1 {
		t.Errorf("got %s, want one notes after the detail", got)
	}
}

// A detail that is not its kind's record is a damaged step, whatever the kind.
func TestDetailThatIsNotItsKindsIsAnError(t *testing.T) {
	for _, tc := range []struct{ kind, detail, want string }{
		{KindFio, `{"bs":"large"}`, "step p: fio detail"},
		{KindBackup, `{"cycle":"first"}`, "step p: backup detail"},
		{KindNoisyPrefix + "quiet", `{"tenants":{}}`, "step p: noisy-quiet detail"},
		{"tpcc", `{"seconds":"eight"}`, "step p: tpcc detail"},
	} {
		var s Step
		err := json.Unmarshal([]byte(`{"name":"p","kind":"`+tc.kind+`","detail":`+tc.detail+`}`), &s)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.kind, err, tc.want)
		}
	}
}

func TestFigureNamesDerived(t *testing.T) {
	if PerUser(FigureTPM) != FigureTPMPerUser {
		t.Errorf("PerUser(tpm) = %s", PerUser(FigureTPM))
	}
	if AtMaxUsers(FigureInteractiveLatencyMean) != "interactive_latency_mean_at_max_users" {
		t.Errorf("AtMaxUsers = %s", AtMaxUsers(FigureInteractiveLatencyMean))
	}
	for stat, want := range map[LatencyStat]float64{"": 0, StatMean: 0, StatP50: 50, StatP999: 99.9} {
		if p, err := stat.Percentile(); err != nil || p != want {
			t.Errorf("%q: %v %v", stat, p, err)
		}
	}
	if _, err := LatencyStat("p42").Percentile(); err == nil || err.Error() != `"p42": use mean, p50, p95, p99 or p99.9` {
		t.Errorf("p42: %v", err)
	}
}
