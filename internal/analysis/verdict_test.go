package analysis

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"dbio/internal/results"
)

func TestJudge(t *testing.T) {
	base := Signals{Samples: 300, HasCPU: true}
	with := func(f func(*Signals)) Signals { s := base; f(&s); return s }
	vda := func(util, readP99, writeP99 float64) func(*Signals) {
		return func(s *Signals) {
			s.Device, s.UtilPct = "vda", util
			s.ReadP99Ms, s.HasReads = readP99, readP99 > 0
			s.WriteP99Ms, s.HasWrites = writeP99, writeP99 > 0
		}
	}
	tests := []struct {
		name string
		in   Signals
		kind results.VerdictKind
		text string
	}{
		{
			name: "nothing sampled",
			in:   Signals{},
			kind: results.VerdictUnknown,
			text: "No CPU figures were sampled in this step, so no bottleneck can be named.",
		},
		{
			name: "iowait high: the 3-datastore study at 89 users",
			in:   with(func(s *Signals) { vda(97, 2.1, 7.05)(s); s.IdlePct, s.IOWaitPct = 12, 37.8 }),
			kind: results.VerdictIO,
			text: "I/O bound: iowait 38 %, vda utilization 97 %, p99 write latency 7.05 ms; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "all tasks stalled on I/O, little iowait",
			in: with(func(s *Signals) {
				vda(80, 1.61, 0)(s)
				s.IdlePct, s.IOWaitPct = 30, 3
				s.HasPSI, s.PSIIOSomePct, s.PSIIOFullPct = true, 45, 15
			}),
			kind: results.VerdictIO,
			text: "I/O bound: iowait 3 %, I/O pressure 45 %, vda utilization 80 %, p99 read latency 1.61 ms; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "busy device with waiting tasks and CPU to spare",
			in: with(func(s *Signals) {
				vda(95, 0.5, 0.92)(s)
				s.IdlePct, s.IOWaitPct = 50, 4
				s.HasPSI, s.PSIIOSomePct = true, 35
			}),
			kind: results.VerdictIO,
			text: "I/O bound: iowait 4 %, I/O pressure 35 %, vda utilization 95 %, p99 write latency 0.92 ms; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "busy device but the CPUs are saturated too",
			in: with(func(s *Signals) {
				vda(94, 0.067, 0.078)(s)
				s.HasPSI, s.PSIIOSomePct, s.PSICPUSomePct = true, 62, 57
			}),
			kind: results.VerdictBalanced,
			text: "CPU and storage both near their limits: idle 0 %, iowait 0 %, I/O pressure 62 %, vda utilization 94 %, p99 write latency 0.078 ms; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "CPU bound",
			in:   with(func(s *Signals) { vda(20, 0.3, 0.5)(s); s.IdlePct, s.IOWaitPct = 2, 0.4 }),
			kind: results.VerdictCPU,
			text: "CPU bound: idle 2 %, iowait 0.4 %; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "CPU bound with pressure and a greedy load generator",
			in: with(func(s *Signals) {
				s.IdlePct, s.DriverCPUPct = 1, 30
				s.HasPSI, s.PSICPUSomePct = true, 80
			}),
			kind: results.VerdictCPU,
			text: "CPU bound: idle 1 %, iowait 0 %, CPU pressure 80 %; the load generator itself used 30 % of the CPU: run it on another host to load the server fully; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "CPU bound by SQLite inside dbio: no advice to move the driver",
			in:   with(func(s *Signals) { s.IdlePct, s.DriverCPUPct, s.InProcessEngine = 1, 95, true }),
			kind: results.VerdictCPU,
			text: "CPU bound: idle 1 %, iowait 0 %; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "hypervisor steal",
			in:   with(func(s *Signals) { s.IdlePct, s.IOWaitPct, s.StealPct = 3, 1, 25 }),
			kind: results.VerdictSteal,
			text: "CPU bound by the hypervisor: steal 25 %, idle 3 %; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "little idle, some iowait",
			in:   with(func(s *Signals) { vda(60, 0, 3)(s); s.IdlePct, s.IOWaitPct = 15, 8 }),
			kind: results.VerdictBalanced,
			text: "CPU and storage both near their limits: idle 15 %, iowait 8 %, vda utilization 60 %, p99 write latency 3 ms; judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "nothing saturated",
			in:   with(func(s *Signals) { vda(35, 0.8, 0)(s); s.IdlePct, s.IOWaitPct = 60, 2 }),
			kind: results.VerdictNone,
			text: "Neither CPU nor storage is saturated: idle 60 %, iowait 2 %, vda utilization 35 %, p99 read latency 0.8 ms; the limit is elsewhere (concurrency, locks, think time, the network or the load generator); judged from the OS's view: the database gave no account of its time",
		},
		{
			name: "nothing saturated, tmpfs target without a device",
			in:   with(func(s *Signals) { s.IdlePct, s.IOWaitPct = 60, 0 }),
			kind: results.VerdictNone,
			text: "Neither CPU nor storage is saturated: idle 60 %, iowait 0 %; the limit is elsewhere (concurrency, locks, think time, the network or the load generator); judged from the OS's view: the database gave no account of its time",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.in, DefaultThresholds())
			if v.Kind != tt.kind || v.Text != tt.text {
				t.Errorf("got  %s %q\nwant %s %q", v.Kind, v.Text, tt.kind, tt.text)
			}
		})
	}
}

func TestJudgeEvidence(t *testing.T) {
	v := Judge(Signals{
		Samples: 10, HasCPU: true, IdlePct: 40, IOWaitPct: 38.123456789, Device: "nvme0n1", UtilPct: 97, QueueDepth: 31.5,
		WriteP99Ms: 7.05, HasWrites: true, DriverCPUPct: 6,
	}, DefaultThresholds())
	want := map[string]float64{
		"cpu_idle_pct": 40, "cpu_iowait_pct": 38.1235, "cpu_steal_pct": 0,
		"disk_nvme0n1_util_pct": 97, "disk_nvme0n1_aqu": 31.5, "disk_nvme0n1_w_await_ms_p99": 7.05,
		"proc_dbio_cpu_pct": 6,
	}
	if !reflect.DeepEqual(v.Evidence, want) {
		t.Errorf("evidence %v\nwant     %v", v.Evidence, want)
	}
}

func TestSignalsFromPicksBusiestDevice(t *testing.T) {
	m := map[string]results.TelemetryStat{
		"cpu_idle_pct":        {Mean: 50, Samples: 1},
		"cpu_iowait_pct":      {Mean: 10, Samples: 1},
		"disk_sda_util_pct":   {Mean: 20, Samples: 1},
		"disk_sda_w_await_ms": {P99: 40, Samples: 1},
		"disk_sdb_util_pct":   {Mean: 90, Samples: 1},
		"disk_sdb_aqu":        {Mean: 4, Samples: 1},
		"disk_sdb_r_await_ms": {P99: 2, Samples: 1},
		"psi_io_some_pct":     {Mean: 12, Samples: 1},
		"proc_dbio_cpu_pct":   {Mean: 6, Samples: 1},
	}
	got := signalsFrom(&results.TelemetrySummary{Samples: 1, Devices: []string{"sda", "sdb"}, Metrics: m})
	want := Signals{
		Samples: 1, HasCPU: true, IdlePct: 50, IOWaitPct: 10,
		Device: "sdb", UtilPct: 90, QueueDepth: 4, ReadP99Ms: 2, HasReads: true,
		HasPSI: true, PSIIOSomePct: 12, DriverCPUPct: 6,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestConcludeASampledStep draws the verdict and the process shares from the
// step summary the telemetry package's snapshot test records (two /proc
// snapshots of a PostgreSQL run): testdata/telemetry-summary.json holds it
// with the conclusions telemetry drew itself before they moved here.
func TestConcludeASampledStep(t *testing.T) {
	b, err := os.ReadFile("testdata/telemetry-summary.json")
	if err != nil {
		t.Fatal(err)
	}
	var want results.TelemetrySummary
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	raw := want
	raw.Verdict, raw.Driver, raw.Server = results.Verdict{}, nil, nil
	got := Conclude(raw)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("got\n%s\nwant the verdict and shares of testdata/telemetry-summary.json", g)
	}
	if got.Verdict.Kind != results.VerdictCPU || got.Driver == nil || got.Server == nil {
		t.Errorf("verdict %+v driver %+v server %+v", got.Verdict, got.Driver, got.Server)
	}
	sqlite := raw
	sqlite.InProcessEngine = true
	if d := Conclude(sqlite).Driver; d == nil || !strings.HasPrefix(d.Text, "dbio (load generator and in-process engine) used") {
		t.Errorf("in-process engine share: %+v", d)
	}
}
