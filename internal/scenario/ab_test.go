package scenario

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"testing"

	"dbio/internal/metrics"
	"dbio/internal/results"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fakeRun builds a loaded run with one step per (users, tps, mean ms).
func fakeRun(steps [][3]float64, hitPerS, missPerS float64, maxUsers float64) *results.Loaded {
	l := &results.Loaded{}
	if maxUsers > 0 {
		l.Run.Figures = []results.Figure{{Name: "max_users_under_ceiling", Value: maxUsers}}
	}
	for i, s := range steps {
		tel, _ := json.Marshal(map[string]any{"metrics": map[string]any{
			"engine_cache_hit_reads_per_s":  map[string]float64{"mean": hitPerS},
			"engine_cache_miss_reads_per_s": map[string]float64{"mean": missPerS},
			"disk_vda_rps":                  map[string]float64{"mean": missPerS * 0.8},
			"disk_vda_r_await_ms":           map[string]float64{"mean": 1.5},
		}})
		l.Steps = append(l.Steps, results.Step{
			Index: i, Users: int(s[0]), Status: results.StatusCompleted,
			Figures:   []results.Figure{{Name: "tps", Value: s[1]}},
			Total:     &metrics.TxSummary{Latency: metrics.Latency{Count: 100, MeanUS: s[2] * 1000, P95US: int64(s[2] * 2000)}},
			Telemetry: tel,
		})
	}
	return l
}

func TestABComparesLikeTheStudy(t *testing.T) {
	// The study's first rows: 38 vs 18 TPS at 1 daemon, 26 vs 55 ms (B is the optimizer).
	a := []*results.Loaded{
		fakeRun([][3]float64{{1, 18, 55}, {6, 30, 80}, {11, 33, 120}}, 580, 420, 6),
		fakeRun([][3]float64{{1, 19, 53}, {6, 29, 82}, {11, 31, 125}}, 570, 430, 6),
	}
	b := []*results.Loaded{
		fakeRun([][3]float64{{1, 38, 26}, {6, 47, 40}, {11, 50, 60}, {16, 52, 90}}, 800, 200, 16),
		fakeRun([][3]float64{{1, 37, 27}, {6, 48, 41}, {11, 49, 62}, {16, 51, 95}}, 810, 190, 16),
	}
	// The second B run never reached its ceiling: its load is a lower bound.
	b[1].Run.Figures = append(b[1].Run.Figures, results.Figure{Name: "ceiling_reached", Value: 0})
	res, err := AB{A: a, B: b, LabelA: "without", LabelB: "with optimizer"}.Compare()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 {
		t.Fatalf("%d steps compared, want the 3 both sides ran", len(res.Steps))
	}
	tps := res.Steps[0].Metrics[0]
	if tps.A.Mean != 18.5 || tps.B.Mean != 37.5 || math.Abs(tps.ImprovementPct-102.7) > 0.1 || !tps.BeyondSpread {
		t.Errorf("TPS at 1 user: %+v", tps)
	}
	rt := res.Steps[0].Metrics[1]
	if rt.ImprovementPct <= 0 {
		t.Errorf("a lower response time must be an improvement: %+v", rt)
	}
	if res.CacheA == nil || math.Abs(res.CacheA.CacheServedPct-57.5) > 0.1 || math.Abs(res.CacheB.CacheServedPct-80.5) > 0.1 {
		t.Errorf("cache accounting A %+v B %+v", res.CacheA, res.CacheB)
	}
	if res.MaxUsersB[0] != 16 || res.MaxUsersA[1] != 6 || res.OpenB[0] || !res.OpenB[1] {
		t.Errorf("max users %v %v", res.MaxUsersA, res.MaxUsersB)
	}
	var md bytes.Buffer
	res.Markdown(&md)
	res.Text(&md)
	if *update {
		os.WriteFile("testdata/ab.golden.md", md.Bytes(), 0o644)
	}
	want, err := os.ReadFile("testdata/ab.golden.md")
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(md.Bytes(), want) {
		t.Errorf("A/B table differs from testdata/ab.golden.md:\n%s", md.String())
	}
}

func TestABNeedsBothSides(t *testing.T) {
	if _, err := (AB{A: []*results.Loaded{fakeRun(nil, 0, 0, 0)}}).Compare(); err == nil {
		t.Fatal("no B runs accepted")
	}
}

func TestSpreadOverlapIsNotADifference(t *testing.T) {
	a := []*results.Loaded{fakeRun([][3]float64{{1, 10, 5}}, 0, 0, 0), fakeRun([][3]float64{{1, 14, 5}}, 0, 0, 0)}
	b := []*results.Loaded{fakeRun([][3]float64{{1, 12, 5}}, 0, 0, 0), fakeRun([][3]float64{{1, 15, 5}}, 0, 0, 0)}
	res, _ := AB{A: a, B: b}.Compare()
	if res.Steps[0].Metrics[0].BeyondSpread {
		t.Error("overlapping runs reported as beyond spread")
	}
}
