package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fio"
	"dbio/internal/results"
	"dbio/internal/testenv"
)

// shortDiskPlan is a one-point disk run (random 8 KiB reads, 1 s) on dir.
func shortDiskPlan(dir, base string, exec execx.Runner) DiskPlan {
	ramp := time.Duration(0)
	return DiskPlan{
		Name: "d", Command: []string{"dbio", "disk"}, ResultsBase: base,
		Fio: FioPhase{Exec: exec, Config: fio.Config{Profile: "sqlio", Targets: []string{dir}, BlockSizes: []int64{8 << 10},
			IODepths: []int{4}, RW: []string{"randread"}, Runtime: time.Second, Ramp: &ramp, Size: 32 << 20}},
	}
}

// A disk run repeated goes through the same repeat set as a workload run:
// one results directory per repeat, named by its number, each a disk run
// of its own, listed by the set's manifest.
func TestDiskRunRepeated(t *testing.T) {
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	shm, err := os.MkdirTemp("/dev/shm", "dbio-disk-repeats-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	base := t.TempDir()
	builds := 0
	out, err := RunRepeated(context.Background(), Repeats{N: 2, Disk: func(rep int) (DiskPlan, error) {
		builds++
		return shortDiskPlan(shm, base, execx.Real{Proc: "/proc"}), nil
	}}, Env{Out: io.Discard, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	set, runs, err := results.LoadRepeatSet(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if builds != 2 || set.Kind != "disk" || set.Status != results.StatusCompleted || len(runs) != 2 || out.Status != results.StatusCompleted {
		t.Fatalf("%d plans built, manifest %+v, %d runs", builds, set, len(runs))
	}
	for i, r := range runs {
		if r.Run.Kind != "disk" || r.Run.Status != results.StatusCompleted || len(r.Steps) != 1 || r.Steps[0].Kind != results.KindFio ||
			!strings.HasSuffix(r.Path, "-d-r"+string(rune('1'+i))) || filepath.Dir(r.Path) != out.Dir {
			t.Errorf("repeat %d: %s %s %s with %d steps", i+1, r.Path, r.Run.Kind, r.Run.Status, len(r.Steps))
		}
	}
}

// A repeat set ends at its first failed repeat, recorded as failed; a disk
// plan that does not validate writes nothing at all.
func TestDiskRepeatsEndAtAFailure(t *testing.T) {
	base := t.TempDir()
	data := t.TempDir()
	out, err := RunRepeated(context.Background(), Repeats{N: 3, Disk: func(int) (DiskPlan, error) {
		return shortDiskPlan(data, base, &execx.Fake{}), nil // no fio
	}}, Env{Out: io.Discard, Now: time.Now})
	if err == nil || !strings.Contains(err.Error(), "repeat 1 of 3") || !strings.Contains(err.Error(), "fio is not installed") {
		t.Fatalf("error %v", err)
	}
	set, rerr := results.ReadRepeatSet(out.Dir)
	if rerr != nil || set.Status != results.StatusFailed || len(set.Runs) != 1 {
		t.Errorf("manifest %+v (%v), want failed after its first repeat", set, rerr)
	}

	base = t.TempDir()
	_, err = RunRepeated(context.Background(), Repeats{N: 2, Disk: func(int) (DiskPlan, error) {
		p := shortDiskPlan(data, base, &execx.Fake{})
		p.Fio.Config.Profile = "no-such-profile"
		return p, nil
	}}, Env{Out: io.Discard, Now: time.Now})
	if entries, _ := os.ReadDir(base); !IsBadInput(err) || len(entries) > 0 {
		t.Errorf("error %v, %d entries written, want bad input and nothing written", err, len(entries))
	}
}

// A repeat set's time left counts each repeat to go as long as the
// repeats so far took on average, and says nothing before one has run.
func TestRepeatsLeft(t *testing.T) {
	if left, _ := repeatsLeft(nil, 3); left != 0 {
		t.Errorf("%s left before any repeat ran", left)
	}
	if left, each := repeatsLeft([]time.Duration{time.Minute, 2 * time.Minute}, 3); each != 90*time.Second || left != 270*time.Second {
		t.Errorf("%s left at %s each, want 4m30s at 1m30s", left, each)
	}
}
