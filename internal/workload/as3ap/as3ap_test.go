package as3ap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"dbio/internal/analysis"
	"dbio/internal/engine"
	"dbio/internal/engine/sqlite"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/runner"
	"dbio/internal/workload"
	"dbio/internal/workload/sqlclient"
)

// generated returns every row of relation t for rows rows.
func generated(rows int, t int) [][]any {
	g := newGenerator(rows, 5)
	r := g.rng(t)
	out := make([][]any, rows)
	for i := range out {
		out[i] = g.row(t, r, i+1)
	}
	return out
}

func distinct(rows [][]any, col int) int {
	seen := map[string]bool{}
	for _, r := range rows {
		seen[fmt.Sprint(r[col])] = true
	}
	return len(seen)
}

func colIndex(name string) int {
	for i, c := range columns {
		if c.name == name {
			return i
		}
	}
	panic(name)
}

func TestGeneratedDistributions(t *testing.T) {
	const n = 5000
	rels := map[string][][]any{}
	for i, name := range relations {
		rels[name] = generated(n, i)
	}
	tests := []struct {
		rel, col string
		want     int
	}{
		{"uniques", "col_key", n}, {"uniques", "col_int", n}, {"uniques", "col_signed", n}, {"uniques", "col_code", n}, {"uniques", "col_name", n},
		{"uniques", "col_float", 100},
		{"hundred", "col_key", n}, {"hundred", "col_int", n}, {"hundred", "col_code", n},
		{"hundred", "col_signed", 100}, {"hundred", "col_float", 100}, {"hundred", "col_double", 100}, {"hundred", "col_decim", 100},
		{"hundred", "col_name", 100}, {"hundred", "col_address", 100},
		{"tenpct", "col_key", n}, {"tenpct", "col_code", n},
		{"tenpct", "col_signed", n / 10}, {"tenpct", "col_double", n / 10}, {"tenpct", "col_decim", n / 10},
		{"tenpct", "col_name", n - n/10 + 1},
		{"updates", "col_key", n}, {"updates", "col_int", n}, {"updates", "col_signed", n}, {"updates", "col_code", n}, {"updates", "col_float", 10},
	}
	for _, tt := range tests {
		if got := distinct(rels[tt.rel], colIndex(tt.col)); got != tt.want {
			t.Errorf("%s.%s: %d distinct values, want %d", tt.rel, tt.col, got, tt.want)
		}
	}
	// Keys: dense 1..n in hundred and updates, sparse over 0..10⁹ elsewhere.
	if last := rels["updates"][n-1][0]; last != int64(n) {
		t.Errorf("updates' last key %v, want %d", last, n)
	}
	if last := rels["uniques"][n-1][0].(int64); last != int64(n)*(keySpan/n) {
		t.Errorf("uniques' last key %d, want %d", last, n*(keySpan/n))
	}
	var addrLen, silicon, asap int
	for _, r := range rels["uniques"] {
		a := r[colIndex("col_address")].(string)
		if len(a) < 2 || len(a) > 80 {
			t.Fatalf("address %q: length %d outside 2..80", a, len(a))
		}
		addrLen += len(a)
		if a == siliconValley {
			silicon++
		}
		if s := r[colIndex("col_signed")].(int64); s < signedLow || s > -signedLow {
			t.Fatalf("signed %d outside ±5·10⁸", s)
		}
		d := r[colIndex("col_date")].(string)
		if d < "1900-01-01" || d > "2000-12-31" || len(d) != 10 {
			t.Fatalf("date %q outside 1900-01-01..2000-12-31", d)
		}
		if c, nm := r[colIndex("col_code")].(string), r[colIndex("col_name")].(string); len(c) != 10 || len(nm) != 20 {
			t.Fatalf("code %q (%d), name %q (%d): want 10 and 20 characters", c, len(c), nm, len(nm))
		}
	}
	if mean := float64(addrLen) / n; mean < 18 || mean > 22 {
		t.Errorf("mean address length %.1f, want about 20", mean)
	}
	if silicon != 1 {
		t.Errorf("%d SILICON VALLEY addresses in uniques, want 1", silicon)
	}
	for _, r := range rels["tenpct"] {
		if r[colIndex("col_name")] == asapName {
			asap++
		}
	}
	if asap != n/10 {
		t.Errorf("%d tenpct rows named %s, want %d", asap, asapName, n/10)
	}
	// Zipf over 100 values: the most frequent float takes about 1/H(100) ≈ 19 %.
	counts := map[float32]int{}
	top := 0
	for _, r := range rels["uniques"] {
		f := r[colIndex("col_float")].(float32)
		counts[f]++
		top = max(top, counts[f])
	}
	if share := float64(top) / n; share < 0.16 || share > 0.23 {
		t.Errorf("most frequent uniques.col_float holds %.3f of rows, want about 0.19 (Zipf)", share)
	}
	// The same seed gives the same data.
	again := generated(n, 0)
	if fmt.Sprint(again[77]) != fmt.Sprint(rels["uniques"][77]) {
		t.Error("the generator is not reproducible")
	}
}

func TestValidate(t *testing.T) {
	c := Config{Rows: 10, BatchJobs: -1, BatchRows: 50, Loading: workload.Loading{LoadWorkers: -2}}
	var msgs []string
	for _, e := range c.Validate() {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"--rows 10", "--batch-jobs -1", "--batch-rows 50: a batch job reads and updates at least 100 rows", "--load-workers -2"} {
		if !strings.Contains(all, want) {
			t.Errorf("validation does not say %q:\n%s", want, all)
		}
	}
	if errs := DefaultConfig().Validate(); len(errs) > 0 {
		t.Errorf("defaults invalid: %v", errs)
	}
	if _, err := InteractiveFigure("p90"); err == nil || !strings.Contains(err.Error(), "use mean, p95 or p99") {
		t.Errorf("InteractiveFigure(p90): %v", err)
	}
}

func smallConfig() Config {
	c := DefaultConfig()
	c.Rows, c.BatchJobs, c.Seed = 2000, 2, 3
	return c
}

func queryInt(t *testing.T, inst engine.Instance, q string) int64 {
	t.Helper()
	var n int64
	if err := inst.DB().QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func prepare(t *testing.T, inst engine.Instance, cfg Config) *Workload {
	t.Helper()
	w := New(cfg)
	st, err := w.Prepare(context.Background(), inst, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != int64(4*cfg.Rows) || st.Reused {
		t.Fatalf("load stats %+v, want %d rows loaded", st, 4*cfg.Rows)
	}
	return w
}

func TestLoad(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		cfg := smallConfig()
		prepare(t, inst, cfg)
		for _, rel := range relations {
			if got := queryInt(t, inst, "SELECT COUNT(*) FROM "+rel); got != int64(cfg.Rows) {
				t.Errorf("%s: %d rows, want %d", rel, got, cfg.Rows)
			}
		}
		for q, want := range map[string]int64{
			"SELECT COUNT(DISTINCT col_signed) FROM hundred":                                        100,
			"SELECT COUNT(DISTINCT col_name) FROM hundred":                                          100,
			"SELECT COUNT(DISTINCT col_signed) FROM tenpct":                                         int64(cfg.Rows / 10),
			"SELECT COUNT(*) FROM tenpct WHERE col_name = '" + asapName + "'":                       int64(cfg.Rows / 10),
			"SELECT COUNT(DISTINCT col_code) FROM uniques":                                          int64(cfg.Rows),
			"SELECT COUNT(*) FROM uniques WHERE col_address = '" + siliconValley + "'":              1,
			"SELECT COUNT(*) FROM updates WHERE col_key BETWEEN 1 AND 2000":                         int64(cfg.Rows),
			"SELECT COUNT(*) FROM uniques WHERE col_date < '1900-01-01' OR col_date > '2000-12-31'": 0,
		} {
			if got := queryInt(t, inst, q); got != want {
				t.Errorf("%s = %d, want %d", q, got, want)
			}
		}
	})
}

// TestReuse: --reuse keeps relations loaded with the run's identity, and
// refuses, having written nothing, relations of another row count, seed or
// loader version, and relations an older dbio loaded.
func TestReuse(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		cfg := smallConfig()
		w := prepare(t, inst, cfg)
		want := workload.NewDataset("as3ap", loaderVersion, 3, [2]string{"rows", "2000"})
		if got := cfg.dataset(); !reflect.DeepEqual(got, want) {
			t.Fatalf("dataset %+v, want %+v", got, want)
		}
		// Values no load makes: a load would replace them.
		if _, err := inst.DB().Exec("UPDATE hundred SET col_int = -7"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			// change is what the run asks for beside the load's settings;
			// edit changes the load's record before the run, undo after.
			change     func(*Config)
			edit, undo string
			// differs is the part named (empty when kept), msg in the refusal.
			differs, msg string
		}{
			{name: "same identity kept"},
			{name: "another seed", change: func(c *Config) { c.Seed = 4 }, differs: "seed", msg: "(seed 3 there, 4 for this run): load afresh without --reuse, or run with --seed 3"},
			{name: "more rows", change: func(c *Config) { c.Rows = 3000 }, differs: "rows", msg: "(rows 2000 there, 3000 for this run): load afresh without --reuse, or run with --rows 2000"},
			{name: "another loader version", edit: "UPDATE dbio_as3ap_meta SET v = '0' WHERE k = 'loader_version'",
				undo:    "UPDATE dbio_as3ap_meta SET v = '" + strconv.Itoa(loaderVersion) + "' WHERE k = 'loader_version'",
				differs: "loader version", msg: "(loader version 0 there, " + strconv.Itoa(loaderVersion) + " for this run): load afresh without --reuse"},
			{name: "an older dbio's relations", edit: "DELETE FROM dbio_as3ap_meta WHERE k IN ('workload', 'loader_version')",
				undo: "INSERT INTO dbio_as3ap_meta (k, v) VALUES ('workload', 'as3ap'), ('loader_version', '" + strconv.Itoa(loaderVersion) + "')",
				msg:  "loaded by an older dbio"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := cfg
				run.Reuse = true
				if tc.change != nil {
					tc.change(&run)
				}
				if tc.edit != "" {
					if _, err := inst.DB().Exec(tc.edit); err != nil {
						t.Fatal(err)
					}
					defer func() {
						if _, err := inst.DB().Exec(tc.undo); err != nil {
							t.Fatal(err)
						}
					}()
				}
				before, _ := sqlclient.ReadMeta(context.Background(), inst.DB(), "dbio_as3ap_meta")
				w2 := New(run)
				st, err := w2.Prepare(context.Background(), inst, io.Discard)
				if tc.msg == "" {
					if err != nil || !st.Reused || !reflect.DeepEqual(st.Dataset, want) {
						t.Fatalf("reuse: %+v, %v; want the relations kept, dataset %+v", st, err, want)
					}
					if w2.baseline != w.baseline {
						t.Errorf("baseline sum %d on reuse, %d after the load", w2.baseline, w.baseline)
					}
				} else {
					var refused *workload.ReuseRefused
					if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.msg) {
						t.Fatalf("got %+v, %v; want a refusal saying %q", st, err, tc.msg)
					}
					if tc.differs != "" && (len(refused.Differences) != 1 || refused.Differences[0].Name != tc.differs) {
						t.Errorf("differences %+v, want %s alone", refused.Differences, tc.differs)
					}
				}
				if n := queryInt(t, inst, "SELECT COUNT(*) FROM hundred WHERE col_int = -7"); n != 2000 {
					t.Errorf("hundred keeps %d of the run's 2000 values: the relations were written", n)
				}
				if after, _ := sqlclient.ReadMeta(context.Background(), inst.DB(), "dbio_as3ap_meta"); !reflect.DeepEqual(after, before) {
					t.Errorf("the load's record became %v, was %v", after, before)
				}
			})
		}
	})
}

func newTestSession(t *testing.T, w *Workload, inst engine.Instance, batch bool) (*session, *metrics.Collector) {
	t.Helper()
	col := metrics.NewCollector(w.TxTypes())
	var s any
	var err error
	if batch {
		s, err = w.NewBackgroundSession(context.Background(), inst, 0, col.NewRecorder())
	} else {
		s, err = w.NewSession(context.Background(), inst, 0, col.NewRecorder())
	}
	if err != nil {
		t.Fatal(err)
	}
	ss := s.(*session)
	t.Cleanup(func() { ss.Close() })
	return ss, col
}

func TestTransactions(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		w := prepare(t, inst, smallConfig())
		ctx := context.Background()
		sum := func() int64 { return queryInt(t, inst, "SELECT SUM(col_signed) FROM updates") }
		user, _ := newTestSession(t, w, inst, false)
		batch, _ := newTestSession(t, w, inst, true)
		before := sum()
		if err := user.readRow(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sum(); got != before {
			t.Errorf("a read changed the data: %d -> %d", before, got)
		}
		if err := user.updateRow(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sum(); got != before+1 {
			t.Errorf("an interactive update moved the sum by %d, want 1", got-before)
		}
		if err := batch.batchRange(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sum(); got != before+1+100 {
			t.Errorf("a batch moved the sum by %d, want 100", got-before-1)
		}
		checks, err := w.Check(ctx, inst)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			if !c.Passed {
				t.Errorf("check %s: %s", c.Name, c.Detail)
			}
		}
	})
}

// TestUsersAndBatchJobsTogether runs two batch jobs beside four interactive
// users and checks that every committed update is in the data.
func TestUsersAndBatchJobsTogether(t *testing.T) {
	forEachEngine(t, func(t *testing.T, inst engine.Instance) {
		w := prepare(t, inst, smallConfig())
		col := metrics.NewCollector(w.TxTypes())
		var wg sync.WaitGroup
		run := func(batch bool, n, times int) {
			var s any
			var err error
			if batch {
				s, err = w.NewBackgroundSession(context.Background(), inst, n, col.NewRecorder())
			} else {
				s, err = w.NewSession(context.Background(), inst, n, col.NewRecorder())
			}
			if err != nil {
				t.Fatal(err)
			}
			ss := s.(*session)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer ss.Close()
				for range times {
					if err := ss.Next(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for n := range 2 {
			run(true, n, 15)
		}
		for n := range 4 {
			run(false, n, 100)
		}
		wg.Wait()
		col.Tick()
		totals := col.StepTotals()
		for i, c := range totals {
			if c.Failed != 0 {
				t.Errorf("%s: %d failed", txNames[i], c.Failed)
			}
		}
		if in := totals[txRead].Committed + totals[txUpdate].Committed; in != 400 || totals[txBatch].Committed != 30 {
			t.Errorf("%d interactive and %d batch transactions committed, want 400 and 30", in, totals[txBatch].Committed)
		}
		figs := map[results.FigureName]float64{}
		for _, f := range w.Figures(totals, time.Second) {
			figs[f.Name] = f.Value
		}
		if figs["interactive_tps"] != 400 || figs["batch_tps"] != 30 || figs["batch_rows_per_s"] != 3000 || figs["interactive_latency_p95"] <= 0 {
			t.Errorf("figures %v", figs)
		}
		checks, err := w.Check(context.Background(), inst)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			if !c.Passed {
				t.Errorf("check %s: %s", c.Name, c.Detail)
			}
		}
	})
}

// TestSteppingStopsAtTheCeiling runs the stepping mode through the runner
// on SQLite: with a ceiling no response time can meet (1 µs) the run stops
// after its first step and keeps no load under it; with one every step
// meets (an hour), it runs every step and reports the last as the largest
// load kept under the ceiling, which it never reached.
func TestSteppingStopsAtTheCeiling(t *testing.T) {
	tests := []struct {
		name      string
		ceilingMS float64
		steps     int
		maxUsers  float64
		reached   float64
	}{
		{"ceiling 1 µs", 0.001, 1, 0, 1},
		{"ceiling 1 h", 3600e3, 3, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := smallConfig()
			figure, err := InteractiveFigure("mean")
			if err != nil {
				t.Fatal(err)
			}
			ceiling := analysis.Ceiling{Figure: figure, Max: tt.ceilingMS, Unit: "ms"}
			plan := runner.Plan{Setup: runner.Setup{
				Name: "as3ap", Kind: "as3ap", Engine: sqlite.Engine{},
				EngineOptions: engine.Options{Database: "as3ap", Fresh: true}, DataPath: t.TempDir(),
				Workload: New(cfg), Tick: 100 * time.Millisecond, ResultsBase: t.TempDir(),
			}, Body: runner.Steps{Users: []int{1, 3, 5}, Step: 300 * time.Millisecond,
				StopWhen: ceiling.Stop, Conclude: ceiling.Conclude}}
			out, err := runner.Run(context.Background(), plan, runner.Env{Out: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Steps) != tt.steps {
				t.Fatalf("ran %d steps (stopped: %q), want %d", len(out.Steps), out.Stopped, tt.steps)
			}
			got := map[results.FigureName]float64{}
			for _, f := range out.Figures {
				got[f.Name] = f.Value
			}
			if got[results.FigureMaxUsersUnderCeiling] != tt.maxUsers || got[results.FigureCeilingReached] != tt.reached {
				t.Errorf("conclusion %v, want %v users under the ceiling, reached %v", got, tt.maxUsers, tt.reached)
			}
			l, err := results.Load(out.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Run.Figures) != len(out.Figures) {
				t.Errorf("run.json figures %v, want %v", l.Run.Figures, out.Figures)
			}
			for _, s := range out.Steps {
				for _, name := range []results.FigureName{results.FigureInteractiveTPS, figure, "batch_tps"} {
					if v, ok := s.Figure(name); !ok || v <= 0 {
						t.Errorf("step %s: %s = %v (present %v)", s.Name, name, v, ok)
					}
				}
			}
			for _, c := range out.Checks {
				if !c.Passed {
					t.Errorf("check %s: %s", c.Name, c.Detail)
				}
			}
		})
	}
}
