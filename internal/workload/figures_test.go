package workload_test

import (
	"slices"
	"testing"
	"time"

	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/workload"
	"dbio/internal/workload/as3ap"
	"dbio/internal/workload/sysbench"
	"dbio/internal/workload/tpcc"
)

// busy are counts of a period in which every type committed, failed,
// retried and reconnected, closed loop or on an open-loop schedule: every
// figure a workload may write has a value.
func busy(types int, paced bool) []metrics.TxCounts {
	out := make([]metrics.TxCounts, types)
	for i := range out {
		out[i] = metrics.TxCounts{Committed: 100, RolledBack: 2, Failed: 3, Retries: 4, Reconnects: 1, Latency: metrics.NewHistogram()}
		for v := range int64(100) {
			out[i].Latency.RecordValue(1000 + 10*v)
		}
		if paced {
			out[i].Paced, out[i].Late, out[i].Corrected = 103, 5, metrics.NewHistogram()
			out[i].Corrected.RecordValue(5000)
		}
	}
	return out
}

// TestWorkloadsWriteCataloguedFigures runs each workload's figures over a
// busy period: what it writes in a step and in a second is what it lists,
// in order, each as the catalogue defines it.
func TestWorkloadsWriteCataloguedFigures(t *testing.T) {
	sb := sysbench.DefaultConfig()
	tests := []struct {
		w    workload.Workload
		want []results.FigureName
	}{
		{tpcc.New(tpcc.Config{}), []results.FigureName{results.FigureTPM, results.FigureNOPM}},
		{sysbench.New(sb), []results.FigureName{results.FigureQPS, results.FigureLatencyMean, results.FigureLatencyP95, results.FigureErrorsPerSec, results.FigureReconnectsPerSec}},
		{as3ap.New(as3ap.Config{Rows: 1000, BatchRows: 10}), []results.FigureName{results.FigureInteractiveTPS, results.FigureInteractiveLatencyMean,
			results.FigureInteractiveLatencyP95, results.FigureInteractiveLatencyP99, results.FigureBatchTPS, results.FigureBatchRowsPerSec, results.FigureBatchLatencyMean}},
	}
	for _, tt := range tests {
		t.Run(tt.w.Name(), func(t *testing.T) {
			if got := tt.w.FigureNames(); !slices.Equal(got, tt.want) {
				t.Errorf("FigureNames %v, want %v", got, tt.want)
			}
			for _, n := range tt.w.FigureNames() {
				if d := n.Def(); !n.Defined() || d.In&results.InStep == 0 || d.In&results.InSecond == 0 {
					t.Errorf("%q: the catalogue does not record it in a step and a second: %+v", n, d)
				}
			}
			counts := busy(len(tt.w.TxTypes()), true)
			step := workload.Summarize(tt.w, counts, time.Minute, 4)
			if err := results.CheckFigures(results.InStep, step.Figures...); err != nil {
				t.Error(err)
			}
			if got := names(step.Figures); !slices.Equal(got, workload.StepFigureNames(tt.w)) {
				t.Errorf("a step's figures %v, listed %v", got, workload.StepFigureNames(tt.w))
			}
			second := workload.SecondFigures(tt.w, counts, time.Second)
			if err := results.CheckFigures(results.InSecond, second...); err != nil {
				t.Error(err)
			}
			if got := names(second); !slices.Equal(got, workload.SecondFigureNames(tt.w)) {
				t.Errorf("a second's figures %v, listed %v", got, workload.SecondFigureNames(tt.w))
			}
			paced := workload.PacedSecondFigures(counts, time.Second, 103)
			if err := results.CheckFigures(results.InSecond, paced...); err != nil {
				t.Error(err)
			}
			if got := names(paced); !slices.Equal(got, workload.PacedSecondFigureNames()) {
				t.Errorf("an open-loop second's figures %v, listed %v", got, workload.PacedSecondFigureNames())
			}
		})
	}
}

func names(figs []results.Figure) []results.FigureName {
	var out []results.FigureName
	for _, f := range figs {
		out = append(out, f.Name)
	}
	return out
}
