package workload

import (
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/results"
)

// countsOnly is a workload reduced to its figures, for the summary arithmetic.
type countsOnly struct{}

func (countsOnly) Name() string      { return "fake" }
func (countsOnly) TxTypes() []string { return []string{"a", "b"} }
func (countsOnly) Prepare(context.Context, engine.Instance, io.Writer) (LoadStats, error) {
	return LoadStats{}, nil
}
func (countsOnly) NewSession(context.Context, engine.Instance, int, *metrics.Recorder) (Session, error) {
	return nil, nil
}
func (countsOnly) Check(context.Context, engine.Instance) ([]CheckResult, error) { return nil, nil }
func (countsOnly) FigureNames() []results.FigureName                             { return []results.FigureName{results.FigureTPM} }
func (countsOnly) Figures(c []metrics.TxCounts, d time.Duration) []results.Figure {
	return []results.Figure{{Name: results.FigureTPM, Value: metrics.PerMinute(c[0].Committed+c[1].Committed, d), Unit: "tx/min"}}
}

// PerUserFigure asks Summarize for TPM per user, as TPC-C does.
func (countsOnly) PerUserFigure() results.FigureName { return results.FigureTPM }

func counts(a, b int64) []metrics.TxCounts {
	out := []metrics.TxCounts{{Latency: metrics.NewHistogram()}, {Latency: metrics.NewHistogram()}}
	out[0].Committed, out[1].Committed, out[1].Failed = a, b, 3
	for i := range a + b {
		out[0].Latency.RecordValue(1000 + i)
	}
	return out
}

func figure(figs []results.Figure, name results.FigureName) (float64, bool) {
	for _, f := range figs {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

func TestSummarize(t *testing.T) {
	s := Summarize(countsOnly{}, counts(60, 60), 2*time.Minute, 4)
	want := map[results.FigureName]float64{results.FigureTPM: 60, results.FigureTPMPerUser: 15, results.FigureTPS: 1}
	for name, v := range want {
		if got, ok := figure(s.Figures, name); !ok || got != v {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, v)
		}
	}
	if s.Total.Committed != 120 || s.Total.Errors != 3 || len(s.Transactions) != 2 || s.Transactions[1].Name != "b" {
		t.Errorf("summary %+v", s)
	}
}

// A tick that comes late covers more time: the rate must use the real interval.
func TestSecondFiguresUseTheRealInterval(t *testing.T) {
	figs := SecondFigures(countsOnly{}, counts(100, 0), 2*time.Second)
	if tps, _ := figure(figs, results.FigureTPS); tps != 50 {
		t.Errorf("tps = %v over 2 s for 100 transactions, want 50", tps)
	}
	if tpm, _ := figure(figs, results.FigureTPM); tpm != 3000 {
		t.Errorf("tpm = %v, want 3000", tpm)
	}
	if errs, _ := figure(figs, "errors"); errs != 3 {
		t.Errorf("errors = %v, want 3", errs)
	}
	if _, ok := figure(SecondFigures(countsOnly{}, counts(0, 0), time.Second), "latency_p99_ms"); ok {
		t.Error("a second without transactions has no latency")
	}
}

func TestParseUsers(t *testing.T) {
	if u, err := ParseUsers(" 1, 2,3,5,8"); err != nil || len(u) != 5 || u[4] != 8 {
		t.Errorf("ParseUsers = %v, %v", u, err)
	}
	for _, bad := range []string{"", "3,a", "0", "-1", "1,,2", "200000"} {
		if _, err := ParseUsers(bad); err == nil {
			t.Errorf("ParseUsers(%q) accepted", bad)
		}
	}
}

func TestThinkTimeIsTruncatedExponential(t *testing.T) {
	p := Pacing{ThinkMean: 10 * time.Second}
	r := rand.New(rand.NewPCG(1, 2))
	var sum time.Duration
	const n = 20000
	for range n {
		d := p.ThinkTime(r)
		if d < 0 || d > 100*time.Second {
			t.Fatalf("think time %v outside [0, 10x mean]", d)
		}
		sum += d
	}
	if mean := sum / n; mean < 9500*time.Millisecond || mean > 10500*time.Millisecond {
		t.Errorf("mean think time %v, want about 10 s", mean)
	}
}

func TestRebind(t *testing.T) {
	got := Rebind("SELECT a FROM t WHERE b = ? AND c = ?", func(n int) string { return "$" + strings.Repeat("I", n) })
	if got != "SELECT a FROM t WHERE b = $I AND c = $II" {
		t.Errorf("Rebind = %q", got)
	}
}

// named is an instance that only has an engine name.
type named struct{ engine.Instance }

func (named) Info() results.EngineInfo { return results.EngineInfo{Engine: "pg"} }

func TestPerEngine(t *testing.T) {
	p := NewPerEngine[int]("w")
	p.Register("pg", 7)
	if v, err := p.For(named{}); err != nil || v != 7 {
		t.Errorf("For = %v, %v", v, err)
	}
	q := NewPerEngine[int]("w")
	q.Register("sqlite", 1)
	q.Register("mariadb", 2)
	if _, err := q.For(named{}); err == nil || !strings.Contains(err.Error(), `w does not support engine "pg" (supported: mariadb, sqlite)`) {
		t.Errorf("unsupported engine: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second registration for one engine did not panic")
		}
	}()
	q.Register("sqlite", 3)
}

// TestYielderYieldsAtMostEvery checks the yield's pace: the first call
// yields, then none until yieldEvery has passed since the last one.
func TestYielderYieldsAtMostEvery(t *testing.T) {
	var y Yielder
	t0 := time.Now()
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{
		{0, true},
		{time.Millisecond, false},
		{yieldEvery - time.Microsecond, false},
		{yieldEvery, true},
		{yieldEvery + time.Millisecond, false},
		{3 * yieldEvery, true},
	} {
		if got := y.Yield(t0.Add(tc.at)); got != tc.want {
			t.Errorf("Yield at +%v = %v, want %v", tc.at, got, tc.want)
		}
	}
}
