package metrics

import (
	"testing"
	"time"
)

// A background session's recorder moves from one step's collector to the
// next; only what it records after the move counts in the new step.
func TestAdoptMovesARecorderBetweenCollectors(t *testing.T) {
	types := []string{"batch"}
	first := NewCollector(types)
	rec := first.NewRecorder()
	rec.Record(0, time.Millisecond, Committed)
	first.Tick()
	if got := first.StepTotals()[0].Committed; got != 1 {
		t.Fatalf("first collector counted %d, want 1", got)
	}
	rec.Record(0, time.Millisecond, Committed) // between steps: not counted anywhere
	second := NewCollector(types)
	second.Adopt(rec)
	rec.Record(0, 2*time.Millisecond, Committed)
	rec.RecordReconnect(0)
	second.Tick()
	got := second.StepTotals()[0]
	if got.Committed != 1 || got.Reconnects != 1 || got.Latency.TotalCount() != 1 {
		t.Fatalf("second collector: %+v, want 1 committed and 1 reconnect", got)
	}
	if s := SummarizeTx("batch", got, time.Second); s.Reconnects != 1 {
		t.Fatalf("summary reconnects %d, want 1", s.Reconnects)
	}
}
