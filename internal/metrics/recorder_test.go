package metrics

import (
	"testing"
	"time"
)

// A recorder holds latencies as values until the tick, past its bound in a
// histogram of its own; either way the tick sees every one, once.
func TestRecorderHoldsLatenciesUntilTheTick(t *testing.T) {
	c := NewCollector([]string{"a", "b"})
	r := c.NewRecorder()
	n := int64(maxPendingLatencies + 10)
	for i := int64(1); i <= n; i++ {
		r.Record(0, time.Duration(i)*time.Microsecond, Committed)
	}
	r.Record(1, time.Second, RolledBack)
	r.RecordRetried(1, time.Second, Failed, 2)
	got := c.Tick()
	a, b := got[0], got[1]
	if a.Committed != n || a.Latency.TotalCount() != n || a.Latency.Min() != 1 || a.Latency.Max() < n*999/1000 {
		t.Errorf("type a: %d committed, %d latencies from %d to %d; want %d from 1 to %d",
			a.Committed, a.Latency.TotalCount(), a.Latency.Min(), a.Latency.Max(), n, n)
	}
	if b.RolledBack != 1 || b.Failed != 1 || b.Retries != 2 || b.Latency.TotalCount() != 1 {
		t.Errorf("type b: %+v, want one rollback with its latency, one failure without, 2 retries", b)
	}
	again := c.Tick()
	if again[0].Committed != 0 || again[0].Latency.TotalCount() != 0 {
		t.Errorf("second tick saw %d committed, %d latencies; want the recorder drained", again[0].Committed, again[0].Latency.TotalCount())
	}
	if step := c.StepTotals(); step[0].Latency.TotalCount() != n {
		t.Errorf("step totals hold %d latencies, want %d", step[0].Latency.TotalCount(), n)
	}
	// Reset drops what a recorder holds, values and overflow alike.
	for range maxPendingLatencies + 1 {
		r.Record(0, time.Millisecond, Committed)
	}
	c.Reset()
	if got := c.Tick(); got[0].Committed != 0 || got[0].Latency.TotalCount() != 0 {
		t.Errorf("after Reset the tick saw %d committed, %d latencies", got[0].Committed, got[0].Latency.TotalCount())
	}
}
