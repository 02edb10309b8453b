package telemetry

import (
	"math"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSamplerReadsAHost: a sampler given a host reads its node exporter at
// each sample, beside this machine: the host's values join the row under
// its name, the step's summary holds the host's own (its CPU shares adding
// up to 100 but for their rounding to 6 digits, its disk among them), this machine's metrics stay its own,
// and a host that stops answering loses its seconds, which its warnings
// count, without holding the row up.
func TestSamplerReadsAHost(t *testing.T) {
	addr, stop := startNodeExporter(t)
	disk := diskOf(t, t.TempDir())
	var devices []string
	if disk != "" {
		devices = []string{disk}
	}
	e, err := NewExporter(ExporterOptions{URL: "http://" + addr + "/metrics", Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{FS: HostFS(), Hosts: []RemoteHost{{Name: "db-1", Exporter: e}}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if pts := s.Sample(start); len(pts) != 0 {
		t.Errorf("the baseline returned %v", pts)
	}
	// The exporter's counters move in hundredths of a second: a run
	// samples once a second, and so does this test.
	<-time.After(time.Second)
	s.StartStep()
	got := map[string]float64{}
	for _, p := range s.Sample(start.Add(time.Second)) {
		got[p.Name] = p.Value
	}
	for _, name := range []string{"cpu_iowait_pct", "host_db_1_cpu_iowait_pct", "host_db_1_cpu_user_pct", "host_db_1_mem_used_mb"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no %s in the row %v", name, got)
		}
	}
	sum := s.StepSummary()
	for name := range sum.Metrics {
		if strings.HasPrefix(name, "host_") {
			t.Errorf("this machine's summary holds the host's %s", name)
		}
	}
	if len(sum.Hosts) != 1 || sum.Hosts[0].Host != "db-1" || sum.Hosts[0].System == nil || sum.Hosts[0].Telemetry == nil {
		t.Fatalf("the step's hosts: %+v", sum.Hosts)
	}
	h := sum.Hosts[0]
	sys := h.System
	if share := sys.CPUUserPct + sys.CPUSystemPct + sys.CPUIowaitPct + sys.CPUStealPct + sys.CPUIdlePct; math.Abs(share-100) > 1e-3 || sys.Seconds != 1 {
		t.Errorf("the host's CPU shares add up to %v over %d seconds: %+v", share, sys.Seconds, sys)
	}
	if sys.MemUsedMB <= 0 || h.Telemetry.CPUs < 1 {
		t.Errorf("the host's memory %v MB, %d CPUs", sys.MemUsedMB, h.Telemetry.CPUs)
	}
	if disk != "" {
		if _, ok := h.Telemetry.Metrics["disk_"+metricKey(disk)+"_util_pct"]; !ok || len(h.Telemetry.Devices) != 1 {
			t.Errorf("no figures of %s in the host's summary: %v", disk, h.Telemetry.Metrics)
		}
	}

	// A host that accepts and never answers costs a row HostReadTimeout
	// at most, and its second.
	stop()
	hung, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	began := time.Now()
	pts := s.Sample(start.Add(2 * time.Second))
	if took := time.Since(began); took > HostReadTimeout+500*time.Millisecond {
		t.Errorf("a sample waited %s for a host that does not answer", took)
	}
	for _, p := range pts {
		if strings.HasPrefix(p.Name, "host_") {
			t.Errorf("a host that does not answer gave %s", p.Name)
		}
	}
	sum = s.StepSummary()
	if w := sum.Hosts[0].Telemetry.Warnings; len(w) != 1 || !strings.Contains(w[0], "read the node exporter failed once") {
		t.Errorf("the host's warnings: %q", w)
	}
	if again := s.StepSummary(); len(again.Hosts[0].Telemetry.Warnings) != 1 {
		t.Errorf("a second summary of the step lost the host's warnings: %q", again.Hosts[0].Telemetry.Warnings)
	}
	s.StartStep()
	if sum := s.StepSummary(); sum.Hosts[0].System != nil || len(sum.Hosts[0].Telemetry.Warnings) != 0 {
		t.Errorf("a new step kept the last one's: %+v", sum.Hosts[0])
	}
}
