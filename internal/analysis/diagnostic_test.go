package analysis

import (
	"strings"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// A regression check fails on the run's own work only: the throughput and
// response times are not diagnostics; the machine's CPU and busiest
// device, the database's waits and time and the server's memory are.
func TestWorkloadMetricsMarkDiagnostics(t *testing.T) {
	steps := []results.Step{{Kind: "tpcc", Users: 1, Status: results.StatusCompleted, Total: &metrics.TxSummary{}}}
	seen := map[bool]int{}
	for _, m := range WorkloadMetrics(steps) {
		work := m.ID == "latency-mean" || m.ID == "latency-p99" || m.ID == "latency-p99-corrected" || !strings.Contains(m.ID, "-")
		if m.Diagnostic == work {
			t.Errorf("metric %s (%s): diagnostic %v", m.ID, m.Title, m.Diagnostic)
		}
		seen[m.Diagnostic]++
	}
	if seen[false] < 2 || seen[true] < 4 {
		t.Errorf("%d metrics of the work and %d diagnostics", seen[false], seen[true])
	}
}
