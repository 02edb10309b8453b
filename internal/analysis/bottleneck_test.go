package analysis

import (
	"reflect"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

// recordedWith is a run with one step per (users, verdict kind).
func recordedWith(steps ...struct {
	users int
	kind  results.VerdictKind
}) *Recorded {
	l := &results.Loaded{}
	for i, s := range steps {
		l.Steps = append(l.Steps, results.Step{Index: i, Users: s.users, Kind: "tpcc", Status: results.StatusCompleted, Total: &metrics.TxSummary{},
			Telemetry: &results.TelemetrySummary{Verdict: results.Verdict{Kind: s.kind, Text: string(s.kind) + ": figures"}}})
	}
	return NewRecorded(l)
}

// The change of bottleneck between runs is found at the heaviest step
// where a run's kind differs from the baseline's, the lighter ones named;
// sets of repeats stand by the kind most of their repeats had.
func TestBottleneckChanged(t *testing.T) {
	type st = struct {
		users int
		kind  results.VerdictKind
	}
	cpu, sync := results.VerdictCPUServer, results.VerdictStorageSync
	a := recordedWith(st{1, cpu}, st{2, cpu}, st{4, cpu})
	b := recordedWith(st{1, sync}, st{2, cpu}, st{4, sync})
	c, ok := BottleneckChanged(RowsByUsers([]*Recorded{a, b}, "tpcc"))
	if !ok || c.Label != "4" || c.Verdicts[0].Kind != cpu || c.Verdicts[1].Kind != sync || !reflect.DeepEqual(c.Also, []string{"1"}) {
		t.Errorf("runs: %+v, %v", c, ok)
	}
	if _, ok := BottleneckChanged(RowsByUsers([]*Recorded{a, a}, "tpcc")); ok {
		t.Error("a run against itself changed its bottleneck")
	}
	// Three repeats a side: B's odd repeat out does not speak for it.
	setA := []*Recorded{a, a, b}
	setB := []*Recorded{b, b, a}
	c, ok = BottleneckChanged(ModalRows([][]*Recorded{setA, setB}, "tpcc"))
	if !ok || c.Label != "4" || c.Verdicts[0].Kind != cpu || c.Verdicts[1].Kind != sync {
		t.Errorf("repeats: %+v, %v", c, ok)
	}
}
