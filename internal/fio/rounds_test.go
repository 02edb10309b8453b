package fio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/results"
	"dbio/internal/target"
)

func TestRoundsPlan(t *testing.T) {
	c := base("snia-rounds")
	p, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Points) != 1+RoundsMax {
		t.Fatalf("%d points, want the fill and %d rounds", len(p.Points), RoundsMax)
	}
	fill, first, last := p.Points[0], p.Points[1], p.Points[RoundsMax]
	if fill.Loops != 2 || fill.RW != "write" || fill.BS != 128<<10 || fill.Round != 0 {
		t.Errorf("fill %+v", fill)
	}
	if first.Name != "round-01-4k-randwrite" || first.Round != 1 || first.RuntimeS != 60 || first.RampS != 0 || first.IODepth != 32 || first.Jobs != 2 ||
		last.Round != RoundsMax || first.SteadyState != "" {
		t.Errorf("rounds %+v ... %+v", first, last)
	}
	// fio's own steady state would end a round early: the rounds are judged
	// across rounds, so --steady-state goes to dbio's judge, not to fio.
	c.SteadyState = "iops:20%"
	if p, err := NewPlan(c, BuiltinProfiles()); err != nil || p.Points[1].SteadyState != "" {
		t.Errorf("with --steady-state: %v, %+v", err, p.Points[1])
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.SteadyState = "tps:10%" }, "the rounds are judged on fio's iops or bw"},
		{func(c *Config) { c.SteadyState = "iops:ten" }, "--steady-state: malformed steady-state criterion"},
		{func(c *Config) { c.SteadyWindow = time.Minute }, "--ss-window and --ss-ramp do not apply to the snia-rounds profile"},
		{func(c *Config) { c.RW = []string{"randread"} }, "--rw does not apply to the snia-rounds profile"},
	} {
		c := base("snia-rounds")
		tc.change(&c)
		if _, err := NewPlan(c, BuiltinProfiles()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// The judge on known rounds: fio's deviation and slope tests over the last
// five rounds' IOPS, and the end after the most rounds.
func TestJudgeRounds(t *testing.T) {
	round := func(n int, iops float64) results.FioPoint {
		return results.FioPoint{FioPlan: results.FioPlan{Name: "r", Series: "rounds", Label: "nvme", Round: n}, FioDirections: results.FioDirections{Total: &results.FioDirection{IOPS: iops}}}
	}
	run := func(c Config, iops ...float64) *results.FioRounds {
		var done []results.FioPoint
		for i, v := range iops[:len(iops)-1] {
			done = append(done, round(i+1, v))
		}
		// A point of another target's rounds is not part of this series.
		other := round(1, 1)
		other.Label = "sata"
		return sniaRounds{}.judge(c, append(done, other), round(len(iops), iops[len(iops)-1]))
	}
	c := base("snia-rounds")
	tests := []struct {
		name                 string
		c                    Config
		iops                 []float64
		judged, steady, last bool
		mean                 float64
	}{
		{"too few rounds", c, []float64{900, 1000, 1000, 1000}, false, false, false, 0},
		// 1000, 1000, 1020, 990, 990: mean 1000, deviation 2 %, slope -3 per round (0.3 %).
		{"flat", c, []float64{500, 1000, 1000, 1020, 990, 990}, true, true, true, 1000},
		// 800 ... 1200 by 100: deviation 20 % of 1000, slope 10 % a round.
		{"still falling", c, []float64{800, 900, 1000, 1100, 1200}, true, false, false, 1000},
		// The same ramp within one relaxed test: slope 10 % < 11 %.
		{"--steady-state replaces both tests", Config{SteadyState: "iops_slope:11%"}, []float64{800, 900, 1000, 1100, 1200}, true, true, true, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := run(tt.c, tt.iops...)
			if v.Judged != tt.judged || v.Steady != tt.steady || v.Last != tt.last || v.WindowIOPSMean != tt.mean {
				t.Errorf("verdict %+v", v)
			}
			if tt.judged && (len(v.WindowIOPS) != RoundsWindow || len(v.Figures) != len(v.Criteria)) {
				t.Errorf("window %v, figures %v for %v", v.WindowIOPS, v.Figures, v.Criteria)
			}
		})
	}
	var rising []float64
	for i := range RoundsMax {
		rising = append(rising, float64(1000+100*i))
	}
	if v := run(c, rising...); !v.Last || v.Steady {
		t.Errorf("after %d rounds still rising: %+v, want the last round, not steady", RoundsMax, v)
	}
}

// The purge deallocates dbio's working file and nothing else: a file that
// is not work.dat in dbio's marked fio directory, or reached through a
// link, is refused untouched.
func TestPurgeOnlyDbiosWorkingFile(t *testing.T) {
	tg, err := target.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, err := tg.Sub(WorkSubdir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(work, workFile)
	data := bytes.Repeat([]byte{0xa5}, 1<<20)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	note, err := purgeWorkFile(file, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); fi.Size() != int64(len(data)) || fullyAllocated(file, int64(len(data))) {
		t.Errorf("after the purge: size %d, fully allocated %v; want the size kept and the blocks gone", fi.Size(), fullyAllocated(file, int64(len(data))))
	}
	if !strings.Contains(note, "1.0 MiB of its 1.0 MiB deallocated") || !strings.Contains(note, "not the device") {
		t.Errorf("note %q", note)
	}

	foreign := t.TempDir() // no marker
	others := []string{filepath.Join(foreign, workFile), filepath.Join(work, "other.dat")}
	fdir := filepath.Join(foreign, WorkSubdir)
	if err := os.Mkdir(fdir, 0o755); err != nil {
		t.Fatal(err)
	}
	others = append(others, filepath.Join(fdir, workFile))
	for _, f := range others {
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), WorkSubdir)
	if err := os.Mkdir(link, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(others[2], filepath.Join(link, workFile)); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(others, filepath.Join(link, workFile)) {
		if _, err := purgeWorkFile(f, int64(len(data))); !errors.Is(err, target.ErrNotOwned) {
			t.Errorf("purge %s: %v, want a refusal", f, err)
		}
	}
	for _, f := range others {
		if !fullyAllocated(f, int64(len(data))) {
			t.Errorf("%s lost blocks", f)
		}
	}
}

// The whole profile on real fio and a small file: the purge, the fill, and
// rounds until steady. A deviation test of 1000 % holds for any window of
// rounds that did I/O, so the rounds end after exactly one window.
func TestRoundsUntilSteady(t *testing.T) {
	requireFio(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := short(Config{Profile: "snia-rounds", Targets: []string{dir}, SteadyState: "iops:1000%", Jobs: 1}, time.Second)
	d := newDir(t, c)
	var out bytes.Buffer
	pts, err := Run(context.Background(), c, d, 0, execx.Real{Proc: "/proc"}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	l := finishAndLoad(t, d)
	if len(pts) != 1+RoundsWindow || len(l.Steps) != len(pts) {
		t.Fatalf("%d points run, %d steps, want the fill and %d rounds:\n%s", len(pts), len(l.Steps), RoundsWindow, out.String())
	}
	for i, s := range l.Steps {
		if s.Index != i || s.Status != results.StatusCompleted {
			t.Errorf("step %d: index %d, %s", i, s.Index, s.Status)
		}
	}
	last := l.Steps[RoundsWindow].Fio
	if v := last.Rounds; v == nil || !v.Steady || !v.Last || v.Criteria[0] != "iops:1000%" || len(v.WindowIOPS) != RoundsWindow {
		t.Fatalf("last round's verdict %+v", last.Rounds)
	}
	if v := l.Steps[2].Fio.Rounds; v == nil || v.Judged {
		t.Errorf("round 2 judged: %+v", v)
	}
	notes := strings.Join(l.Run.Notes, "\n")
	for _, want := range []string{"purged the working file", "steady after 5 rounds (iops:1000% over the last 5)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("run.json notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.Contains(out.String(), "round 5: steady (iops:1000% over rounds 1-5") {
		t.Errorf("terminal:\n%s", out.String())
	}
	// The fill wrote the purged file back: a later run may reuse it.
	file := filepath.Join(dir, target.DirName, WorkSubdir, workFile)
	if !fullyAllocated(file, testSize) {
		t.Error("the working file has holes after the fill")
	}
}

// A working file left with holes (a purge whose fill never ran) is laid out
// again rather than measured: its holes would read as zeros.
func TestPurgedWorkingFileIsNotReused(t *testing.T) {
	requireFio(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := short(Config{Profile: "four-corners", Targets: []string{dir}, RW: nil}, time.Second)
	tg, err := target.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	work, err := tg.Sub(WorkSubdir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(work, workFile)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, testSize); err != nil {
		t.Fatal(err)
	}
	plan, err := NewPlan(c, BuiltinProfiles())
	if err != nil {
		t.Fatal(err)
	}
	plan.Points = plan.Points[:1]
	d := newDir(t, c)
	if _, err := RunPlan(context.Background(), plan, d, 0, execx.Real{Proc: "/proc"}, nil); err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(d.Run().Notes, "\n"); !strings.Contains(notes, "had unallocated blocks") || !strings.Contains(notes, "laid out the working file") {
		t.Errorf("notes:\n%s", notes)
	}
	if !fullyAllocated(file, testSize) {
		t.Error("the working file still has holes")
	}
}
