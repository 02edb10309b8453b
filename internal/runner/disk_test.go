package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"dbio/internal/execx"
	"dbio/internal/fio"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// TestDiskRunsOwnTheirDirectory: the runner creates a disk run's results
// directory only for a plan that validates, and finishes it whatever fio does.
func TestDiskRunsOwnTheirDirectory(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		// wantDir says a results directory is made; wantStatus and wantErr are its ending.
		wantDir    bool
		wantStatus results.Status
		wantErr    string
	}{
		{name: "a plan that does not validate writes nothing", profile: "no-such-profile", wantErr: "no-such-profile"},
		{name: "a missing fio fails the run in its directory", profile: "four-corners", wantDir: true,
			wantStatus: results.StatusFailed, wantErr: "fio is not installed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			data := filepath.Join(t.TempDir(), "data")
			p := DiskPlan{
				Name: "disk", Command: []string{"dbio", "disk"},
				Fio:           FioPhase{Config: fio.Config{Profile: tc.profile, Targets: []string{data}}, Exec: &execx.Fake{}},
				CreateTargets: true, ResultsBase: base,
			}
			out, err := RunDisk(context.Background(), p, Env{Out: io.Discard, Now: time.Now})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if !tc.wantDir {
				if entries, _ := os.ReadDir(base); out.Dir != "" || len(entries) > 0 {
					t.Fatalf("directory %q made (%d entries under the base), want none", out.Dir, len(entries))
				}
				return
			}
			l, lerr := results.Load(out.Dir)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if out.Status != tc.wantStatus || l.Run.Status != tc.wantStatus || !strings.Contains(l.Run.Error, tc.wantErr) {
				t.Errorf("outcome %s, run.json %s (%q), want %s saying %q", out.Status, l.Run.Status, l.Run.Error, tc.wantStatus, tc.wantErr)
			}
			if d := l.Run.Config.Disk; l.Run.Kind != "disk" || d == nil || d.Profile != tc.profile {
				t.Errorf("run.json kind %q config %+v, want disk with the plan's fio configuration", l.Run.Kind, d)
			}
		})
	}
}

// TestOptionalFioPhaseWithoutFio: quick's device pass is skipped with a
// warning when fio is missing, and the run goes on.
func TestOptionalFioPhaseWithoutFio(t *testing.T) {
	p := Plan{Setup: Setup{
		Name: "quick", Kind: "quick", DataPath: filepath.Join(t.TempDir(), "data"),
		CreateTargets: true, ResultsBase: t.TempDir(),
		Fio: &FioPhase{Config: fio.QuickCorners(time.Second), Exec: &execx.Fake{}, Optional: true},
	}}
	var log strings.Builder
	out, err := Run(context.Background(), p, Env{Out: &log, Now: time.Now})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	l, err := results.Load(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	skipped := slices.ContainsFunc(l.Run.Warnings, func(w string) bool { return strings.HasPrefix(w, "device pass skipped: fio is not installed") })
	if l.Run.Status != results.StatusCompleted || !skipped || len(l.Steps) != 0 {
		t.Errorf("run.json status %s, warnings %q, %d steps: want completed with the skipped device pass", l.Run.Status, l.Run.Warnings, len(l.Steps))
	}
	if !strings.Contains(log.String(), "skipping the device pass") {
		t.Errorf("output %q does not say the pass was skipped", log.String())
	}
}

// A disk run under a storage class lays its working file out at the
// device's own speed and caps only its points: 32 MB laid out under a
// 2 MB/s write cap would take 16 s, and the point written at the cap
// shows it binds from the first point on.
func TestDiskRunCapsThePointsNotTheLayout(t *testing.T) {
	h := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (h.V1Blkio != "" || h.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	testenv.RequireProgram(t, "fio", fio.InstallHint)
	data := filepath.Join(smallfs.MountDisk(t, 128<<20), "data")
	ramp := time.Duration(0)
	c := fio.Config{Profile: "sqlio", Targets: []string{data}, BlockSizes: []int64{64 << 10}, IODepths: []int{4}, RW: []string{"write"},
		Runtime: 2 * time.Second, Ramp: &ramp, Size: 32 << 20, SysFS: target.HostFS()}
	var out strings.Builder
	o, err := RunDisk(context.Background(), DiskPlan{Name: "capped-disk", Command: []string{"dbio", "disk"}, ResultsBase: t.TempDir(), CreateTargets: true,
		Fio: FioPhase{Config: c, Exec: execx.Real{Proc: "/proc"}, Limits: iolimit.Limits{WriteBPS: 2 << 20}}}, Env{Out: &out, Now: time.Now, SysFS: target.HostFS()})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	laid := regexp.MustCompile(`done in ([0-9.]+) s`).FindStringSubmatch(out.String())
	if laid == nil {
		t.Fatalf("no layout said:\n%s", out.String())
	}
	if s, _ := strconv.ParseFloat(laid[1], 64); s >= 12 {
		t.Errorf("the 32 MB layout took %s s, as long as under the 2 MB/s cap: the cap bound before the first point", laid[1])
	}
	l, err := results.Load(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Steps) != 1 || l.Steps[0].Fio == nil || l.Steps[0].Fio.Write == nil {
		t.Fatalf("steps %+v", l.Steps)
	}
	// 2 MiB/s is 2.1 MB/s; the throttle's first slice may let a little more through.
	if mbs := l.Steps[0].Fio.Write.MBPerSec(); mbs > 3 {
		t.Errorf("the point wrote %.1f MB/s under a 2 MiB/s cap: the cap did not bind", mbs)
	}
	if !slices.ContainsFunc(l.Run.Notes, func(n string) bool { return strings.Contains(n, "binding from the first point") }) {
		t.Errorf("run.json does not say the layout ran uncapped: %q", l.Run.Notes)
	}
}
