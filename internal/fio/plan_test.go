package fio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/results"
)

func intp(v int) *int                     { return &v }
func durp(d time.Duration) *time.Duration { return &d }

// base is a host-independent configuration: 2 CPUs, 8 GiB.
func base(profile string) Config {
	return Config{Profile: profile, Targets: []string{"/mnt/nvme"}, CPUs: 2, MemoryBytes: 8 << 30}
}

func TestPlans(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		points int
		check  func(t *testing.T, p Plan)
	}{
		{"four-corners on 2 CPUs, then the log-write points", nil, 8, func(t *testing.T, p Plan) {
			want := []string{"4k-randread 2x64", "4k-randwrite 2x64", "64k-read 1x32", "64k-write 1x16", "128k-read 1x32", "128k-write 1x16",
				"8k-log-write 1x1", "16k-log-write 1x1"}
			for i, pt := range p.Points {
				if got := fmt.Sprintf("%s %dx%d", pt.Name, pt.Jobs, pt.IODepth); got != want[i] {
					t.Errorf("point %d: %s, want %s", i, got, want[i])
				}
				if pt.RuntimeS != 60 || pt.RampS != 5 || pt.Split {
					t.Errorf("%s: runtime %d ramp %d split %v", pt.Name, pt.RuntimeS, pt.RampS, pt.Split)
				}
				if logWrite := i >= 6; pt.LogWrite() != logWrite || pt.WriteThrough != logWrite || (logWrite && pt.RW != "write") {
					t.Errorf("%s: %s, log write %v, O_DSYNC %v", pt.Name, pt.RW, pt.LogWrite(), pt.WriteThrough)
				}
			}
		}},
		{"four-corners on 16 CPUs keeps 128 in flight over 4 jobs", func(c *Config) { c.CPUs = 16 }, 8, func(t *testing.T, p Plan) {
			if pt := p.Points[0]; pt.Jobs != 4 || pt.IODepth != 32 {
				t.Errorf("%s: %d jobs x %d", pt.Name, pt.Jobs, pt.IODepth)
			}
		}},
		{"four-corners with --jobs 4 splits sequential jobs", func(c *Config) { c.Jobs = 4 }, 8, func(t *testing.T, p Plan) {
			if pt := p.Points[2]; pt.Jobs != 4 || pt.IODepth != 8 || !pt.Split {
				t.Errorf("%s: %d jobs x %d split %v", pt.Name, pt.Jobs, pt.IODepth, pt.Split)
			}
		}},
		{"--jobs and --iodepth leave a commit's log write one write from one job", func(c *Config) { c.Jobs, c.IODepths = 4, []int{32} }, 8, func(t *testing.T, p Plan) {
			for _, pt := range p.Points[6:] {
				if pt.Jobs != 1 || pt.IODepth != 1 || pt.Split {
					t.Errorf("%s: %d jobs x %d split %v", pt.Name, pt.Jobs, pt.IODepth, pt.Split)
				}
			}
		}},
		{"quick's pass sizes the log-write points as its corners", func(c *Config) {
			q := QuickCorners(3 * time.Second)
			c.Runtime, c.Ramp, c.Size = q.Runtime, q.Ramp, q.Size
		}, 8, func(t *testing.T, p Plan) {
			for _, pt := range p.Points {
				if pt.RuntimeS != 3 || pt.RampS != 1 {
					t.Errorf("%s: %ds after %ds", pt.Name, pt.RuntimeS, pt.RampS)
				}
			}
			if d := p.Duration(); d != 32*time.Second {
				t.Errorf("quick's device pass lasts %s, want 32s (8 points of 3s after 1s)", d)
			}
		}},
		{"sqlio is the 96-point matrix", func(c *Config) { c.Profile = "sqlio" }, 96, func(t *testing.T, p Plan) {
			if pt := p.Points[0]; pt.Name != "randread-8k-qd1" || pt.Jobs != 2 {
				t.Errorf("first point %s with %d jobs", pt.Name, pt.Jobs)
			}
			if pt := p.Points[95]; pt.Name != "write-1m-qd64" || !pt.Split {
				t.Errorf("last point %s split %v", pt.Name, pt.Split)
			}
			if d := p.Duration(); d != 96*65*time.Second {
				t.Errorf("duration %s", d)
			}
		}},
		{"sqlio random only", func(c *Config) { c.Profile = "sqlio"; c.RW = []string{"randread", "randwrite"} }, 48, nil},
		{"mix of the study", func(c *Config) { c.Profile = "mix" }, 7, func(t *testing.T, p Plan) {
			pt := p.Points[0]
			if pt.Name != "r70-4k" || pt.RW != "randrw" || pt.ReadPct != 70 || pt.Jobs != 4 || pt.IODepth != 8 {
				t.Errorf("first point %+v", pt)
			}
		}},
		{"mix 75/25 over two depths", func(c *Config) {
			c.Profile, c.ReadPct, c.IODepths, c.BlockSizes = "mix", intp(75), []int{8, 32}, []int64{4096}
		}, 2, func(t *testing.T, p Plan) {
			if p.Points[1].Name != "r75-4k-qd32" {
				t.Errorf("names %s %s", p.Points[0].Name, p.Points[1].Name)
			}
		}},
		{"curve: a maximum then 12 rates", func(c *Config) { c.Profile = "curve" }, 13, func(t *testing.T, p Plan) {
			if p.Points[0].Name != "randread-4k-max" || p.Points[0].RateOf != "" {
				t.Errorf("first point %+v", p.Points[0])
			}
			last := p.Points[12]
			if last.Name != "randread-4k-rate-120pct" || last.RateOf != "randread-4k-max" || last.RatePct != 120 {
				t.Errorf("last point %+v", last)
			}
		}},
		{"curve on two targets refers to each target's own maximum", func(c *Config) {
			c.Profile, c.Targets, c.RatePcts = "curve", []string{"/mnt/nvme", "/mnt/sata"}, []float64{50}
		}, 4, func(t *testing.T, p Plan) {
			if p.Points[3].Name != "sata-randread-4k-rate-50pct" || p.Points[3].RateOf != "sata-randread-4k-max" {
				t.Errorf("%+v", p.Points[3])
			}
		}},
		{"drive group: one point per step on every target", func(c *Config) {
			c.Targets, c.Group = []string{"/mnt/a", "/mnt/b"}, true
		}, 8, func(t *testing.T, p Plan) {
			if pt := p.Points[0]; pt.Label != "group" || len(pt.Targets) != 2 || pt.Name != "4k-randread" {
				t.Errorf("%+v", pt)
			}
		}},
		{"precondition: fill, then steady state", func(c *Config) { c.Profile = "precondition" }, 2, func(t *testing.T, p Plan) {
			fill, steady := p.Points[0], p.Points[1]
			if fill.Loops != 2 || fill.RuntimeS != 0 || fill.RW != "write" {
				t.Errorf("fill %+v", fill)
			}
			if steady.SteadyState != "iops_slope:0.167%" || steady.SteadyWindowS != 60 || steady.RuntimeS != 1800 {
				t.Errorf("steady %+v", steady)
			}
		}},
		{"--steady-state applies to unthrottled points only", func(c *Config) {
			c.Profile, c.SteadyState, c.SteadyWindow, c.RatePcts = "curve", "auto", 20*time.Second, []float64{50}
		}, 2, func(t *testing.T, p Plan) {
			if p.Points[0].SteadyState != "iops_slope:0.5%" || p.Points[1].SteadyState != "" {
				t.Errorf("max %q, rate %q", p.Points[0].SteadyState, p.Points[1].SteadyState)
			}
		}},
		{"job: one point exactly as given", func(c *Config) {
			c.Profile, c.RW, c.BlockSizes, c.IODepths, c.Jobs, c.ReadPct = "job", []string{"randrw"}, []int64{8192}, []int{8}, 4, intp(70)
			c.WriteThrough, c.BlockAlign = true, 4096
		}, 1, func(t *testing.T, p Plan) {
			pt := p.Points[0]
			if pt.Name != "randrw70-8k-t4-q8" || pt.ReadPct != 70 || pt.Jobs != 4 || pt.IODepth != 8 || pt.Split || !pt.WriteThrough || pt.BlockAlign != 4096 || pt.Buffered {
				t.Errorf("%+v", pt)
			}
		}},
		{"job: sequential jobs all start at the file's beginning", func(c *Config) {
			c.Profile, c.RW, c.Jobs, c.Buffered = "job", []string{"read"}, 4, true
		}, 1, func(t *testing.T, p Plan) {
			if pt := p.Points[0]; pt.Split || !pt.Buffered || pt.IODepth != 1 || pt.BS != 4096 {
				t.Errorf("%+v", pt)
			}
		}},
		{"crystaldiskmark: four tests read, then written, on 1 GiB", func(c *Config) { c.Profile = "crystaldiskmark" }, 8, func(t *testing.T, p Plan) {
			want := []string{"seq1m-q8t1-read read 1048576 1x8", "seq1m-q1t1-read read 1048576 1x1", "rnd4k-q32t1-read randread 4096 1x32",
				"rnd4k-q1t1-read randread 4096 1x1", "seq1m-q8t1-write write 1048576 1x8", "seq1m-q1t1-write write 1048576 1x1",
				"rnd4k-q32t1-write randwrite 4096 1x32", "rnd4k-q1t1-write randwrite 4096 1x1"}
			for i, pt := range p.Points {
				if got := fmt.Sprintf("%s %s %d %dx%d", pt.Name, pt.RW, pt.BS, pt.Jobs, pt.IODepth); got != want[i] {
					t.Errorf("point %d: %s, want %s", i, got, want[i])
				}
				if pt.RuntimeS != 5 || pt.RampS != 5 {
					t.Errorf("%s: runtime %d ramp %d, want CrystalDiskMark's 5 and 5", pt.Name, pt.RuntimeS, pt.RampS)
				}
			}
			if p.Config.Size != 1<<30 {
				t.Errorf("size %d, want CrystalDiskMark's 1 GiB", p.Config.Size)
			}
		}},
		{"crystaldiskmark with its size and time changed", func(c *Config) {
			c.Profile, c.Size, c.Runtime = "crystaldiskmark", 8<<30, 30*time.Second
		}, 8, func(t *testing.T, p Plan) {
			if p.Config.Size != 8<<30 || p.Points[0].RuntimeS != 30 {
				t.Errorf("size %d, runtime %d", p.Config.Size, p.Points[0].RuntimeS)
			}
		}},
		{"--ss-ramp reaches fio as steadystate_ramp_time", func(c *Config) {
			c.Profile, c.SteadyRamp = "precondition", 30*time.Second
		}, 2, func(t *testing.T, p Plan) {
			if pt := p.Points[1]; pt.SteadyRampS != 30 || !strings.Contains(mustJobFile(t, pt, "precondition", nil), "steadystate_ramp_time=30\n") {
				t.Errorf("%+v", pt)
			}
			if !strings.Contains(Describe(p.Points[1]), "until steady (iops_slope:0.167% over 60s after the first 30s)") {
				t.Errorf("%s", Describe(p.Points[1]))
			}
		}},
		{"overrides of runtime and ramp", func(c *Config) { c.Runtime, c.Ramp = 2*time.Second, durp(0) }, 8, func(t *testing.T, p Plan) {
			if pt := p.Points[0]; pt.RuntimeS != 2 || pt.RampS != 0 {
				t.Errorf("%+v", pt)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base("four-corners")
			if tc.change != nil {
				tc.change(&c)
			}
			p, err := NewPlan(c, BuiltinProfiles())
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Points) != tc.points {
				t.Fatalf("%d points, want %d", len(p.Points), tc.points)
			}
			seen := map[string]bool{}
			for _, pt := range p.Points {
				if seen[pt.Name] {
					t.Errorf("point name %s used twice", pt.Name)
				}
				seen[pt.Name] = true
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Config{Profile: "four-corners", Runtime: 1500 * time.Millisecond, IODepths: []int{0}, BlockSizes: []int64{1000},
		RW: []string{"sideways"}, ReadPct: intp(120), RatePcts: []float64{-5}, LatencyStat: "p42", SteadyState: "fast", Group: true}
	dup := Config{Profile: "four-corners", Targets: []string{"/mnt/a", "/mnt/a/"}}
	if err := errors.Join(dup.Validate(BuiltinProfiles())...); err == nil || !strings.Contains(err.Error(), "--target /mnt/a/ is given twice") {
		t.Errorf("duplicate target: %v", err)
	}
	errs := c.Validate(BuiltinProfiles())
	all := errors.Join(errs...).Error()
	for _, want := range []string{"no target", "--group needs", "--runtime 1.5s", "--iodepth 0", "--bs 1000 B", `--rw "sideways"`,
		"--read-pct 120", "--rates -5", `--latency-stat "p42"`, `--steady-state "fast"`} {
		if !strings.Contains(all, want) {
			t.Errorf("errors do not mention %q:\n%s", want, all)
		}
	}
}

func TestProfilesRejectFlagsTheyIgnore(t *testing.T) {
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.BlockSizes = []int64{8192} }, "--bs does not apply to the four-corners profile"},
		{func(c *Config) { c.IODepths = []int{1, 2} }, "--iodepth: the four-corners profile takes one value"},
		{func(c *Config) { c.Profile = "sqlio"; c.ReadPct = intp(50) }, "--read-pct does not apply to the sqlio profile"},
		{func(c *Config) { c.Profile = "sqlio"; c.RW = []string{"randrw"} }, "use the mix profile"},
		{func(c *Config) { c.Profile = "mix"; c.RW = []string{"randread"} }, "mixes reads and writes"},
		{func(c *Config) { c.Profile = "curve"; c.ReadPct = intp(50) }, "--read-pct applies to a mixed --rw"},
		{func(c *Config) { c.Profile = "precondition"; c.Runtime = 10 * time.Second }, "shorter than the steady-state window"},
		{func(c *Config) { c.Profile = "job"; c.BlockSizes = []int64{4096, 8192} }, "--bs: the job profile takes one value"},
		{func(c *Config) { c.Profile = "job"; c.BlockAlign = 4096; c.RW = []string{"read"} }, "block alignment 4096 applies to random I/O"},
		{func(c *Config) { c.Profile = "crystaldiskmark"; c.Jobs = 2 }, "--iodepth and --jobs do not apply to the crystaldiskmark profile"},
		{func(c *Config) { c.Profile = "crystaldiskmark"; c.BlockSizes = []int64{8192} }, "--bs does not apply to the crystaldiskmark profile"},
		{func(c *Config) { c.Profile = "nosuch" }, "unknown fio profile \"nosuch\": use one of crystaldiskmark, curve, four-corners, job, mix, precondition, snia-rounds, sqlio, sqlserver"},
		{func(c *Config) { c.Profile = "sqlserver"; c.BlockSizes = []int64{4096} }, "--bs does not apply to the sqlserver profile"},
		{func(c *Config) {
			c.Profile = "precondition"
			c.Runtime = 80 * time.Second
			c.SteadyRamp = 30 * time.Second
		}, "(after --ss-ramp 30s)"},
		{func(c *Config) { c.SteadyRamp = 30 * time.Second }, "--ss-ramp applies with --steady-state"},
		{func(c *Config) { c.SteadyWindow = 30 * time.Second }, "--ss-window applies with --steady-state"},
		{func(c *Config) { c.Profile = "precondition"; c.SteadyRamp = 1500 * time.Millisecond }, "--ss-ramp 1.5s: use whole seconds"},
	} {
		c := base("four-corners")
		tc.change(&c)
		_, err := NewPlan(c, BuiltinProfiles())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

func TestRegistry(t *testing.T) {
	// --help and the error for an unknown profile list them by name.
	want := []string{"crystaldiskmark", "curve", "four-corners", "job", "mix", "precondition", "snia-rounds", "sqlio", "sqlserver"}
	if got := BuiltinProfiles().Names(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("BuiltinProfiles().Names() = %v, want %v", got, want)
	}
	if _, err := BuiltinProfiles().Lookup("fourcorners"); err == nil || err.Error() != `unknown fio profile "fourcorners": use one of `+strings.Join(want, ", ") {
		t.Errorf("an unknown profile: %v", err)
	}
	r := NewRegistry()
	r.Register(fourCorners{})
	if _, err := r.Lookup("Four-Corners"); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	r.Register(fourCorners{})
}

func TestTargetLabels(t *testing.T) {
	got := TargetLabels([]string{"/mnt/nvme", "/srv/data", "/backup/data", "/", "/x/global", "/mnt/my disk"})
	want := []string{"nvme", "data2", "data3", "target", "target-global", "my-disk"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestDefaultSize(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name        string
		mem, avail  uint64
		fs          string
		want        int64
		why, errMsg string
	}{
		{"twice the RAM", 8 * gib, 500 * gib, "ext4", 16 * gib, "twice the RAM", ""},
		{"capped", 64 * gib, 4000 * gib, "xfs", MaxDefaultSize, "capped", ""},
		{"half the free space", 24 * gib, 20 * gib, "ext4", 10 * gib, "half the target's free space", ""},
		{"smaller than RAM is said", 24 * gib, 4 * gib, "ext4", 2 * gib, "smaller than RAM", ""},
		{"tmpfs", 24 * gib, 12 * gib, "tmpfs", gib, "RAM", ""},
		{"too little space", 8 * gib, 300 << 20, "ext4", 0, "", "too little"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why, err := DefaultSize(tc.mem, tc.avail, tc.fs)
			if tc.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
					t.Fatalf("error %v, want %q", err, tc.errMsg)
				}
				return
			}
			if err != nil || got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("got %d %q %v, want %d and %q", got, why, err, tc.want, tc.why)
			}
		})
	}
}

// TestJobFilesGolden pins the job files dbio writes for one point of each kind.
func TestJobFilesGolden(t *testing.T) {
	places := []placement{{Label: "nvme", File: "/mnt/nvme/dbio/fio/work.dat", Size: 1 << 30, Engine: "io_uring", Direct: true}}
	group := append(places, placement{Label: "sata", File: "/mnt/sa:ta/dbio/fio/work.dat", Size: 1 << 30, Engine: "libaio", Direct: false})
	for _, tc := range []struct {
		name   string
		p      results.FioPlan
		places []placement
	}{
		{"randread", results.FioPlan{Name: "4k-randread", RW: "randread", BS: 4096, IODepth: 64, Jobs: 2, RuntimeS: 60, RampS: 5}, places},
		{"seq-split", results.FioPlan{Name: "64k-read", RW: "read", BS: 65536, IODepth: 8, Jobs: 4, Split: true, RuntimeS: 60, RampS: 5}, places},
		{"mix-rate", results.FioPlan{Name: "r70-8k-rate", RW: "randrw", ReadPct: 70, BS: 8192, IODepth: 8, Jobs: 4, RuntimeS: 30,
			RateOf: "max", RatePct: 50, RateIOPS: 10000}, places},
		{"fill", results.FioPlan{Name: "fill", RW: "write", BS: 131072, IODepth: 32, Jobs: 1, Loops: 2}, places},
		{"write-through-aligned", results.FioPlan{Name: "randrw70-8k-t4-q8", RW: "randrw", ReadPct: 70, BS: 8192, IODepth: 8, Jobs: 4, RuntimeS: 60,
			RampS: 5, WriteThrough: true, BlockAlign: 4096}, places},
		{"buffered", results.FioPlan{Name: "read-64k-t1-q2", RW: "read", BS: 65536, IODepth: 2, Jobs: 1, RuntimeS: 10, RampS: 5, Buffered: true}, places},
		{"steady-group", results.FioPlan{Name: "steady", RW: "randwrite", BS: 4096, IODepth: 32, Jobs: 2, RuntimeS: 1800,
			SteadyState: "iops_slope:0.167%", SteadyWindowS: 60}, group},
		{"log-write", plannedPoint(t, base("four-corners"), "8k-log-write"), places},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustJobFile(t, tc.p, "test", tc.places)
			golden(t, filepath.Join("testdata", "jobs", tc.name+".fio"), []byte(got))
		})
	}
}

// plannedPoint is the point of c's plan named name.
func plannedPoint(t *testing.T, c Config, name string) results.FioPlan {
	t.Helper()
	p, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range p.Points {
		if pt.Name == name {
			return pt
		}
	}
	t.Fatalf("no point %s in the %s plan", name, c.Profile)
	return results.FioPlan{}
}

// TestJobFilesParse has the real fio read every job file of every profile.
func TestJobFilesParse(t *testing.T) {
	requireFio(t)
	dir := t.TempDir()
	places := []placement{{Label: "t", File: filepath.Join(dir, "work.dat"), Size: 64 << 20, Engine: "io_uring", Direct: true}}
	for _, name := range BuiltinProfiles().Names() {
		c := base(name)
		c.RatePcts = nil
		p, err := NewPlan(c, BuiltinProfiles())
		if err != nil {
			t.Fatal(err)
		}
		for i, pt := range p.Points {
			if pt.RateOf != "" {
				pt.RateIOPS = 1000
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.fio", name, i))
			if err := os.WriteFile(path, []byte(mustJobFile(t, pt, name, places)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// One fio reads all of a profile's job files; on a failure, the
		// message names the file.
		args := []string{"--parse-only"}
		for i := range p.Points {
			args = append(args, filepath.Join(dir, fmt.Sprintf("%s-%d.fio", name, i)))
		}
		if res, err := (execx.Real{Proc: "/proc"}).Run(context.Background(), execx.Cmd{Name: "fio", Args: args}); err != nil {
			t.Errorf("%s: fio rejects a job file: %v %s", name, err, res.Stderr)
		}
	}
}

func TestJobRate(t *testing.T) {
	for _, tc := range []struct {
		total   int64
		jobs    int
		rw      string
		readPct int
		want    string
	}{
		{10000, 4, "randread", 0, "2500"},
		{10001, 4, "randread", 0, "2500"},
		{3, 4, "randwrite", 0, "1"},
		{10000, 2, "randrw", 70, "3500,1500"},
		{10000, 2, "randrw", 100, "5000,0"},
	} {
		if got := jobRate(tc.total, tc.jobs, tc.rw, tc.readPct); got != tc.want {
			t.Errorf("jobRate(%d, %d, %s, %d) = %s, want %s", tc.total, tc.jobs, tc.rw, tc.readPct, got, tc.want)
		}
	}
}

// TestFourCornersSummary: the profile's conclusion is each completed
// log-write point's p50 and p99, and says when a drive group's writers
// are counted together; the corners and an unfinished point add nothing.
func TestFourCornersSummary(t *testing.T) {
	done := func(name string, targets ...string) results.FioPoint {
		pts := plannedPoint(t, base("four-corners"), "8k-log-write")
		pts.Name, pts.Targets = name, targets
		lat := results.FioLatency{MeanUS: 150, Percentiles: []results.FioPercentile{{P: 50, US: 120}, {P: 99, US: 4100}}}
		return results.FioPoint{FioPlan: pts, Status: results.StatusCompleted,
			FioDirections: results.FioDirections{Write: &results.FioDirection{Completion: lat}, Total: &results.FioDirection{Completion: lat}}}
	}
	corner := done("4k-randwrite", "/mnt/nvme")
	corner.Series, corner.WriteThrough = "4k-randwrite", false
	failed := done("16k-log-write", "/mnt/nvme")
	failed.Status, failed.Total = results.StatusFailed, nil
	got := fourCorners{}.Summarize(Config{}, []results.FioPoint{corner, done("8k-log-write", "/mnt/nvme"), failed, done("group-8k-log-write", "/mnt/a", "/mnt/b")})
	want := []string{
		"8k-log-write: a commit's log write costs the device 120 µs at p50, 4.10 ms at p99 (8k sequential writes, one at a time, O_DSYNC)",
		"group-8k-log-write: a commit's log write costs the devices 120 µs at p50, 4.10 ms at p99 (8k sequential writes, one at a time, O_DSYNC, a writer on each of 2 targets at once, their writes counted together)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
