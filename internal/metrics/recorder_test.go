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

// A transaction begun on an open-loop schedule records its service time as
// every transaction does, and its latency from the intended start (delay
// plus service) beside it; only paced transactions count as paced or late,
// and a closed-loop recorder carries no corrected histogram at all.
func TestRecorderPacedTransactions(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		// each transaction: Begin's delay (-1: not paced), late, service time, outcome
		txs []struct {
			delay, service time.Duration
			late           bool
			o              Outcome
		}
		wantPaced     int64
		wantLate      int64
		wantService   []int64 // sorted min and max, µs
		wantCorrected []int64 // min and max, µs; nil: no corrected histogram
	}{
		{name: "closed loop", txs: []struct {
			delay, service time.Duration
			late           bool
			o              Outcome
		}{{-1, 5 * ms, false, Committed}},
			wantService: []int64{5000, 5000}},
		{name: "on time", txs: []struct {
			delay, service time.Duration
			late           bool
			o              Outcome
		}{{0, 5 * ms, false, Committed}, {0, 7 * ms, false, RolledBack}},
			wantPaced: 2, wantService: []int64{5000, 7000}, wantCorrected: []int64{5000, 7000}},
		{name: "late behind a stall", txs: []struct {
			delay, service time.Duration
			late           bool
			o              Outcome
		}{{0, 5 * ms, false, Committed}, {900 * ms, 5 * ms, true, Committed}},
			wantPaced: 2, wantLate: 1, wantService: []int64{5000, 5000}, wantCorrected: []int64{5000, 905000}},
		{name: "a failure is paced but has no latency", txs: []struct {
			delay, service time.Duration
			late           bool
			o              Outcome
		}{{20 * ms, 0, true, Failed}, {0, 3 * ms, false, Committed}},
			wantPaced: 2, wantLate: 1, wantService: []int64{3000, 3000}, wantCorrected: []int64{3000, 3000}},
		{name: "Begin covers one transaction only", txs: []struct {
			delay, service time.Duration
			late           bool
			o              Outcome
		}{{50 * ms, 1 * ms, true, Committed}, {-1, 2 * ms, false, Committed}},
			wantPaced: 1, wantLate: 1, wantService: []int64{1000, 2000}, wantCorrected: []int64{51000, 51000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector([]string{"a"})
			r := c.NewRecorder()
			for _, tx := range tc.txs {
				if tx.delay >= 0 {
					r.Begin(tx.delay, tx.late)
				}
				r.Record(0, tx.service, tx.o)
			}
			got := c.Tick()[0]
			if got.Paced != tc.wantPaced || got.Late != tc.wantLate {
				t.Errorf("paced %d, late %d; want %d, %d", got.Paced, got.Late, tc.wantPaced, tc.wantLate)
			}
			if lo, hi := got.Latency.Min(), got.Latency.Max(); !near(lo, tc.wantService[0]) || !near(hi, tc.wantService[1]) {
				t.Errorf("service from %d to %d µs, want %v", lo, hi, tc.wantService)
			}
			switch {
			case tc.wantCorrected == nil && got.Corrected != nil:
				t.Errorf("a closed-loop step has a corrected histogram of %d values", got.Corrected.TotalCount())
			case tc.wantCorrected != nil && got.Corrected == nil:
				t.Errorf("no corrected histogram, want %v", tc.wantCorrected)
			case tc.wantCorrected != nil:
				if lo, hi := got.Corrected.Min(), got.Corrected.Max(); !near(lo, tc.wantCorrected[0]) || !near(hi, tc.wantCorrected[1]) {
					t.Errorf("corrected from %d to %d µs, want %v", lo, hi, tc.wantCorrected)
				}
			}
			s := SummarizeTx("a", c.StepTotals()[0], time.Second)
			if (s.Corrected != nil) != (tc.wantCorrected != nil) || s.Late != tc.wantLate {
				t.Errorf("summary: corrected %v, late %d; want corrected %v, late %d", s.Corrected, s.Late, tc.wantCorrected, tc.wantLate)
			}
		})
	}
}

// near allows the histograms' three significant digits.
func near(got, want int64) bool { return got >= want-want/500 && got <= want+want/500 }
