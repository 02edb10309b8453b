package fio

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/steady"
)

// TestPrecisionEndsAPointOnceItsFiguresArePrecise runs real fio on tmpfs:
// a point held at a steady rate ends before its ceiling once its IOPS
// are within ±5 % (at its 10 s minimum on a quiet machine), with fio's
// figures over the seconds it ran. ±5 % asks the IOPS' drift known within
// ±10 %: on CI's loaded machine a minute of fio's seconds at a flat 2,000
// IOPS gave +0.02 % ± 11 %, so the ceiling is two minutes, over which the
// drift's interval narrows about threefold. A point asked
// for a bound no real second-to-second variation meets runs to its
// ceiling. run.json's steps say how each ended and the interval reached.
func TestPrecisionEndsAPointOnceItsFiguresArePrecise(t *testing.T) {
	t.Parallel()
	requireFio(t)
	for _, tc := range []struct {
		name    string
		bound   string
		rate    int64 // IOPS the point is held at, 0 for none
		runtime time.Duration
		ended   []string
	}{
		// 2,000 IOPS of 4 KiB reads from tmpfs is a small share of what
		// one job does even on a busy 2-core machine: fio holds it.
		{"steady rate ends early", "iops:5%", 2000, 2 * time.Minute, []string{results.PrecisionReached}},
		{"a bound out of reach runs to the ceiling", "iops:0.001%", 0, 12 * time.Second, []string{results.PrecisionCeiling, results.PrecisionNotSteady}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := steady.ParsePrecision(tc.bound)
			if err != nil {
				t.Fatal(err)
			}
			c := short(Config{Profile: "job", RW: []string{"randread"}, BlockSizes: []int64{4096}, Targets: []string{shmDir(t)}}, tc.runtime)
			c.Ramp = durp(time.Second)
			c.Precision = &PrecisionBound{Precision: p, Min: 10 * time.Second}
			plan, err := NewPlan(c, BuiltinProfiles())
			if err != nil {
				t.Fatal(err)
			}
			plan.Points[0].RateIOPS = tc.rate
			d := newDir(t, c)
			var out bytes.Buffer
			pts, err := RunPlan(context.Background(), plan, d, 0, execx.Real{Proc: "/proc"}, &out)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			l := finishAndLoad(t, d)
			if len(l.Steps) != 1 || len(pts) != 1 || pts[0].Status != results.StatusCompleted {
				t.Fatalf("steps %+v\n%s", l.Steps, out.String())
			}
			s := l.Steps[0]
			pr := s.Precision
			if pr == nil {
				t.Fatalf("run.json's step records no precision:\n%s", out.String())
			}
			if !slices.Contains(tc.ended, pr.Ended) {
				t.Fatalf("ended %q, want one of %q:\n%s", pr.Ended, tc.ended, out.String())
			}
			if pr.Asked != p.String() || pr.CeilingS != tc.runtime.Seconds() || pr.MinS != 10 || len(pr.Figures) != len(p.Targets) ||
				!strings.HasPrefix(pr.Steady, "iops's drift across the measurement") {
				t.Errorf("precision record %+v", pr)
			}
			// What the steadiness test judged: the IOPS' line across the
			// measured seconds, steady when the point ended precise.
			if d := pr.Drift; d != nil && (d.Series != "iops" || d.HalfPct != nil && d.Batches < 10) || pr.Ended == results.PrecisionReached && (d == nil || !pr.SteadyAtEnd) {
				t.Errorf("drift %+v, steady at the end %v", pr.Drift, pr.SteadyAtEnd)
			}
			// fio's figures are over the seconds it measured, which the
			// bound's measurement saw end.
			measured := float64(pts[0].Total.RuntimeMS) / 1000
			if s.MeasureS != measured {
				t.Errorf("step measured %.3f s, fio %.3f s", s.MeasureS, measured)
			}
			switch pr.Ended {
			case results.PrecisionReached:
				if pr.AtS < 10 || measured >= tc.runtime.Seconds()-5 || measured < pr.AtS-0.5 {
					t.Errorf("precise at %.1f s, fio measured %.1f s of a %s ceiling", pr.AtS, measured, tc.runtime)
				}
				f := pr.Figures[0]
				if f.ReachedPct == nil || *f.ReachedPct > 5 || f.Lo == nil || f.Hi == nil {
					t.Fatalf("iops interval %+v", f)
				}
				// The bound's mean of the seconds and fio's own figure
				// describe the same seconds.
				if fioIOPS := pts[0].Total.IOPS; math.Abs(f.Mean-fioIOPS) > 0.05*fioIOPS {
					t.Errorf("bound's mean %.0f IOPS, fio's %.0f", f.Mean, fioIOPS)
				}
				if !strings.Contains(out.String(), "precise after") {
					t.Errorf("the terminal does not say the point was precise:\n%s", out.String())
				}
			default:
				if math.Abs(measured-tc.runtime.Seconds()) > 1 {
					t.Errorf("fio measured %.1f s, want the %s ceiling", measured, tc.runtime)
				}
			}
		})
	}
}

// TestPrecisionProblems refuses bounds a fio point cannot meet, each with
// its fix, before anything runs.
func TestPrecisionProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		bound  string
		change func(*Config)
		want   string
	}{
		{"a database figure", "nopm:2%", nil, "records no per-second nopm"},
		{"a transaction type", "new_order:p99:10%", nil, "no transaction types"},
		{"minimum beyond the runtime", "2%", func(c *Config) { c.Precision.Min = 2 * time.Minute }, "longer than each point's runtime"},
		{"with fio's steady state", "2%", func(c *Config) { c.SteadyState = "auto" }, "give one of them"},
		{"rounds", "2%", func(c *Config) { c.Profile = "snia-rounds" }, "rounds are judged steady"},
		{"a whole-file pass", "2%", func(c *Config) { c.Profile = "precondition" }, "without --precision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := steady.ParsePrecision(tc.bound)
			if err != nil {
				t.Fatal(err)
			}
			c := base("job")
			c.Runtime = time.Minute
			c.Precision = &PrecisionBound{Precision: p, Min: 30 * time.Second}
			if tc.change != nil {
				tc.change(&c)
			}
			errs := c.Validate(BuiltinProfiles())
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Errorf("problems %q, want one saying %q", all, tc.want)
			}
		})
	}
	// The figures a point records are accepted, in either name.
	for _, bound := range []string{"2%", "iops:2%", "mb_s:2%", "lat_mean_us:5%", "p99:10%", "p99.9:20%", "lat_p99_us:10%,iops:2%"} {
		p, err := steady.ParsePrecision(bound)
		if err != nil {
			t.Fatal(err)
		}
		c := base("job")
		c.Runtime = time.Minute
		c.Precision = &PrecisionBound{Precision: p, Min: 30 * time.Second}
		if errs := c.Validate(BuiltinProfiles()); len(errs) > 0 {
			t.Errorf("%s: %v", bound, errs)
		}
	}
}
