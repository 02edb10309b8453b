package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"dbio/internal/fio"
	"dbio/internal/goal"
	"dbio/internal/steady"
	"dbio/internal/workload"
	"dbio/internal/workload/sysbench"
)

// Expect adds up a plan's parts: the load as the data policy has it (once
// per run, once then a restore per later run, none), ramp-ups and
// measurements at their ceilings and, until precise, at the typical
// length the workload's usual variation gives, backups, a noisy study's
// tenants and phases, a goal's probes.
func TestExpect(t *testing.T) {
	est := workload.Estimate{Load: 40 * time.Second, How: "test rate", ThroughputCV: 0.1, LatencyCV: 0.5}
	withData := func(policy workload.DataPolicy) workload.Workload {
		c := sysbench.DefaultConfig()
		c.Data = policy
		return sysbench.New(c)
	}
	precision := func(text string) *PrecisionBound {
		p, err := steady.ParsePrecision(text)
		if err != nil {
			t.Fatal(err)
		}
		return &PrecisionBound{Precision: p, Min: 30 * time.Second}
	}
	steps := Steps{Users: []int{1, 2}, RampUp: 30 * time.Second, Step: 2 * time.Minute}
	// 400 MB kept at KeepBytesPerSecond, restored at ResetBytesPerSecond.
	const space = 400e6
	keep := time.Duration(space / KeepBytesPerSecond * float64(time.Second))
	restore := time.Duration(space / ResetBytesPerSecond * float64(time.Second)).Round(time.Second)
	tests := []struct {
		name    string
		w       workload.Workload
		body    Body
		in      ExpectInputs
		parts   string // what: typical/ceiling in seconds, in order
		typical time.Duration
		ceiling time.Duration
	}{
		{"fixed steps, fresh data", withData(workload.DataFresh), steps, ExpectInputs{},
			"load 40/40, ramp-ups 60/60, measurements 240/240", 340 * time.Second, 340 * time.Second},
		{"repeated, fresh data each time", withData(""), steps, ExpectInputs{Repeats: 3},
			"load 120/120, ramp-ups 180/180, measurements 720/720", 1020 * time.Second, 1020 * time.Second},
		// (1.96 × 0.1 / 0.02)² = 96 s of a 120 s ceiling.
		{"until precise, typically before the ceiling", withData(""), withPrecision(steps, precision("2%")), ExpectInputs{},
			"load 40/40, ramp-ups 60/60, measurements 192/240", 292 * time.Second, 340 * time.Second},
		// (1.96 × 0.1 / 0.1)² = 4 s: the 30 s minimum.
		{"until precise, at the minimum", withData(""), withPrecision(steps, precision("10%")), ExpectInputs{},
			"load 40/40, ramp-ups 60/60, measurements 60/240", 160 * time.Second, 340 * time.Second},
		// A percentile varies five times as much: (1.96 × 0.5 / 0.05)² = 384 s, beyond the ceiling.
		{"until precise, a percentile beyond the ceiling", withData(""), withPrecision(steps, precision("5%,read:p99:5%")), ExpectInputs{},
			"load 40/40, ramp-ups 60/60, measurements 240/240", 340 * time.Second, 340 * time.Second},
		{"reset: one load, a copy, a restore per later repeat", withData(workload.DataReset), steps, ExpectInputs{Repeats: 3},
			fmt.Sprintf("load 40/40, pristine copy %d/%d, resets %d/%d, ramp-ups 180/180, measurements 720/720", keep/time.Second, keep/time.Second, 2*restore/time.Second, 2*restore/time.Second),
			940*time.Second + keep + 2*restore, 940*time.Second + keep + 2*restore},
		{"reset with the copy there: restores only", withData(workload.DataReset), steps, ExpectInputs{Repeats: 2, Kept: true},
			fmt.Sprintf("resets %d/%d, ramp-ups 120/120, measurements 480/480", 2*restore/time.Second, 2*restore/time.Second), 600*time.Second + 2*restore, 600*time.Second + 2*restore},
		{"reuse: no load", withData(workload.DataReuse), steps, ExpectInputs{},
			"load 0/0, ramp-ups 60/60, measurements 240/240", 300 * time.Second, 300 * time.Second},
		// Each cycle: the interval, a backup and a restore of half the load each.
		{"backup and restore cycles", withData(""), Backups{Cycles: 3, Interval: time.Minute, Restore: true}, ExpectInputs{},
			"load 40/40, backups 300/300", 340 * time.Second, 340 * time.Second},
		{"noisy neighbours: every tenant loaded", withData(""), Noisy{Tenants: 3, RampUp: 10 * time.Second, Quiet: time.Minute, Cycles: 2, Interval: 45 * time.Second}, ExpectInputs{},
			"load 120/120, phases 170/170", 290 * time.Second, 290 * time.Second},
		{"goal search: every probe", withData(""), Goal{RampUp: 10 * time.Second, Step: 20 * time.Second, Search: goal.Search{MaxProbes: 4}}, ExpectInputs{},
			"load 40/40, probes 120/120", 160 * time.Second, 160 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plan{Setup: Setup{Workload: tt.w, SpaceNeeded: space}, Body: tt.body}
			in := tt.in
			in.Load = est
			e := Expect(p, in)
			var parts []string
			for _, part := range e.Parts {
				parts = append(parts, fmt.Sprintf("%s %d/%d", part.What, part.Typical/time.Second, part.Ceiling/time.Second))
				if part.How == "" {
					t.Errorf("part %s does not say what it rests on", part.What)
				}
			}
			if got := strings.Join(parts, ", "); got != tt.parts {
				t.Errorf("parts %s\nwant  %s", got, tt.parts)
			}
			if e.Typical() != tt.typical || e.Ceiling() != tt.ceiling {
				t.Errorf("typical %s, ceiling %s; want %s, %s", e.Typical(), e.Ceiling(), tt.typical, tt.ceiling)
			}
			if e.Bounded() != (tt.typical < tt.ceiling) {
				t.Errorf("bounded %v with typical %s of %s", e.Bounded(), e.Typical(), e.Ceiling())
			}
		})
	}
}

func withPrecision(s Steps, b *PrecisionBound) Steps {
	s.Precision = b
	return s
}

// A workload whose variation is not known gives no typical length: its
// measurements until precise are counted at their ceilings.
func TestTypicalMeasurementWithoutVariation(t *testing.T) {
	p, _ := steady.ParsePrecision("2%")
	d, how := TypicalMeasurement(PrecisionBound{Precision: p, Min: 30 * time.Second}, 5*time.Minute, workload.Estimate{})
	if d != 5*time.Minute || !strings.Contains(how, "no usual variation") {
		t.Errorf("%s (%s), want the 5m ceiling", d, how)
	}
}

// ExpectDisk counts a precision-bound device pass at its ceiling and, as
// typical, each point's warm-up and the seconds after which IOPS varying
// as FioIOPSCV says are within the bound: (1.96 × 0.25 / 0.2)² = 6 s,
// raised to the 30 s minimum; 5 % needs 96 s, beyond the 60 s runtime; a
// latency bound counts at the runtime.
func TestExpectDiskPrecision(t *testing.T) {
	for _, tc := range []struct {
		bound   string
		typical time.Duration
	}{
		{"", 65 * time.Second},
		{"20%", 35 * time.Second},
		{"iops:20%,mb_s:20%", 35 * time.Second},
		{"iops:5%", 65 * time.Second},
		{"iops:20%,p99:50%", 65 * time.Second},
	} {
		t.Run(tc.bound, func(t *testing.T) {
			cfg := fio.Config{Profile: "job", Targets: []string{"/mnt/nvme"}, Runtime: time.Minute, CPUs: 2, MemoryBytes: 8 << 30}
			if tc.bound != "" {
				p, err := steady.ParsePrecision(tc.bound)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Precision = &fio.PrecisionBound{Precision: p, Min: 30 * time.Second}
			}
			e := ExpectDisk(DiskPlan{Fio: FioPhase{Config: cfg}}, 0, 2)
			if e.Ceiling() != 2*65*time.Second || e.Typical() != 2*tc.typical {
				t.Errorf("ceiling %s, typical %s; want %s and %s: %+v", e.Ceiling(), e.Typical(), 2*65*time.Second, 2*tc.typical, e.Parts)
			}
			if tc.bound != "" && !strings.Contains(e.Parts[0].How, "until precise") {
				t.Errorf("the part does not say its points end when precise: %q", e.Parts[0].How)
			}
		})
	}
}

// The consistency checks are counted once a run where the workload knows
// how long they take, and not where the run skips them, where its body
// checks nothing, or where their time was never measured.
func TestExpectCountsTheChecks(t *testing.T) {
	checked := workload.Estimate{Load: 40 * time.Second, How: "test rate", Check: 3 * time.Second, CheckHow: "test checks"}
	steps := Steps{Users: []int{1}, RampUp: 10 * time.Second, Step: time.Minute}
	tests := []struct {
		name  string
		skip  bool
		body  Body
		est   workload.Estimate
		runs  int
		parts string
	}{
		{"steps, twice", false, steps, checked, 2, "load 80/80, ramp-ups 20/20, measurements 120/120, checks 6/6"},
		{"a goal search checks as it ends", false, Goal{RampUp: 10 * time.Second, Step: 20 * time.Second, Search: goal.Search{MaxProbes: 2}}, checked, 1, "load 40/40, probes 60/60, checks 3/3"},
		{"checks skipped", true, steps, checked, 1, "load 40/40, ramp-ups 10/10, measurements 60/60"},
		{"backups check nothing", false, Backups{Cycles: 1, Interval: time.Minute}, checked, 1, "load 40/40, backups 80/80"},
		{"a check time never measured", false, steps, workload.Estimate{Load: 40 * time.Second, How: "test rate"}, 1, "load 40/40, ramp-ups 10/10, measurements 60/60"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plan{Setup: Setup{Workload: sysbench.New(sysbench.DefaultConfig()), SkipChecks: tt.skip}, Body: tt.body}
			e := Expect(p, ExpectInputs{Load: tt.est, Repeats: tt.runs})
			var parts []string
			for _, part := range e.Parts {
				parts = append(parts, fmt.Sprintf("%s %d/%d", part.What, part.Typical/time.Second, part.Ceiling/time.Second))
				if part.What == "checks" && !strings.Contains(part.How, "test checks") {
					t.Errorf("the checks' part says %q, not what their time rests on", part.How)
				}
			}
			if got := strings.Join(parts, ", "); got != tt.parts {
				t.Errorf("parts %s\nwant  %s", got, tt.parts)
			}
		})
	}
}
