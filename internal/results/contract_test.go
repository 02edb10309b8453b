package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A step written with its typed records reads back as the same records: the
// telemetry summary and a fio point's detail.
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
	steps := []Step{
		{Index: 0, Name: "randread-4k", Kind: KindFio, Status: StatusCompleted, Figures: []Figure{{Name: FigureIOPS, Value: 1000, Unit: "IOPS"}}, Telemetry: tel, Fio: fio},
		{Index: 1, Name: "backup-1", Kind: "backup", Status: StatusCompleted, Detail: json.RawMessage(`{"op":"backup","cycle":1}`)},
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
	if got := l.Steps[0]; !reflect.DeepEqual(got.Telemetry, tel) || !reflect.DeepEqual(got.Fio, fio) || got.Detail != nil {
		t.Errorf("fio step read back as\n%+v\n%+v", got.Telemetry, got.Fio)
	}
	var compact bytes.Buffer
	if got := l.Steps[1]; got.Fio != nil || json.Compact(&compact, got.Detail) != nil || compact.String() != `{"op":"backup","cycle":1}` {
		t.Errorf("backup step's detail read back as %s (fio %v)", got.Detail, got.Fio)
	}
}

func TestFioDetailThatIsNotOneIsAnError(t *testing.T) {
	var s Step
	err := json.Unmarshal([]byte(`{"name":"p","kind":"fio","detail":{"bs":"large"}}`), &s)
	if err == nil || !strings.Contains(err.Error(), "step p: fio detail") {
		t.Errorf("got %v", err)
	}
}

// The config view reads what the report needs from every shape run.json's
// config has had, and leaves out what is absent or of another type.
func TestConfigView(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         RunConfig
	}{
		{"tpcc", `{"engine":"sqlite","users":[1,2,4],"rampup_s":2,"step_s":6.5,"tpcc":{"warehouses":3,"keying_thinking":false}}`,
			RunConfig{Users: []int{1, 2, 4}, StepS: "6.5", RampUpS: "2", Warehouses: 3, KeyingThinking: "false"}},
		{"disk", `{"profile":"sqlio","latency_max":"10ms","latency_stat":"p99"}`, RunConfig{LatencyMax: "10ms", LatencyStat: StatP99}},
		{"suite run without the timing", `{"users":[1],"tpcc":{}}`, RunConfig{Users: []int{1}}},
		{"memory of a command", `{"users":[1],"engine_options":{"buffer_pool_bytes":33554432,"server_memory_bytes":536870912}}`,
			RunConfig{Users: []int{1}, BufferPoolBytes: 32 << 20, ServerMemoryBytes: 512 << 20}},
		{"memory of a suite's run", `{"buffer_pool_bytes":1073741824,"server_memory_bytes":4294967296}`,
			RunConfig{BufferPoolBytes: 1 << 30, ServerMemoryBytes: 4 << 30}},
		{"values of another type", `{"users":"1,2","step_s":[6],"tpcc":{"warehouses":"two"}}`, RunConfig{}},
		{"not an object", `[1,2]`, RunConfig{}},
		{"none", ``, RunConfig{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Run{Config: json.RawMessage(tc.config)}).ConfigView(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
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
