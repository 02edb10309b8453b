package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// recorder is a T that records how a requirement stopped the test.
type recorder struct {
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// fakeMachine has the given environment, the programs in PATH and the files
// that exist outside it.
func fakeMachine(env map[string]string, inPath []string, files ...string) Machine {
	return Machine{
		Getenv: func(k string) string { return env[k] },
		LookPath: func(name string) (string, error) {
			for _, p := range inPath {
				if p == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", errors.New("not found")
		},
		Glob: func(pattern string) ([]string, error) {
			var out []string
			for _, f := range files {
				if ok, _ := filepath.Match(pattern, f); ok {
					out = append(out, f)
				}
			}
			return out, nil
		},
	}
}

func TestRequireProgram(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		inPath   []string
		files    []string
		wantPath string
		// wantSkip and wantFail are substrings of the message; "" means none.
		wantSkip, wantFail string
	}{
		{name: "installed", inPath: []string{"fio"}, wantPath: "/usr/bin/fio"},
		{name: "installed under CI", env: map[string]string{"CI": "true"}, inPath: []string{"fio"}, wantPath: "/usr/bin/fio"},
		{name: "outside PATH", files: []string{"/opt/fio/bin/fio"}, wantPath: "/opt/fio/bin/fio"},
		{name: "missing outside CI skips with the install command", wantSkip: "needs fio, which is missing: install it with: apt-get install -y fio (make test does)"},
		{name: "missing under CI fails", env: map[string]string{"CI": "true"}, wantFail: "needs fio, which is missing, and CI=true forbids skipping it: install it with: apt-get install -y fio"},
		{name: "CI=1 is CI", env: map[string]string{"CI": "1"}, wantFail: "CI=true forbids"},
		{name: "CI=false is not", env: map[string]string{"CI": "false"}, wantSkip: "apt-get install -y fio"},
		{name: "CI=yes is not a boolean, so not CI", env: map[string]string{"CI": "yes"}, wantSkip: "apt-get install -y fio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			got := fakeMachine(tt.env, tt.inPath, tt.files...).RequireProgram(&r, "fio", InstallFio, "/opt/*/bin")
			if got != tt.wantPath {
				t.Errorf("path %q, want %q", got, tt.wantPath)
			}
			check(t, "skip", r.skipped, tt.wantSkip)
			check(t, "failure", r.failed, tt.wantFail)
		})
	}
}

func TestRequireEngine(t *testing.T) {
	ci := map[string]string{"CI": "true"}
	tests := []struct {
		name, engine       string
		env                map[string]string
		inPath, files      []string
		wantSkip, wantFail string
	}{
		{name: "sqlite is built in", engine: "sqlite", env: ci},
		{name: "postgres from Debian's versioned directory", engine: "postgres", env: ci, files: []string{"/usr/lib/postgresql/15/bin/initdb"}},
		{name: "postgres in PATH", engine: "postgres", env: ci, inPath: []string{"initdb"}},
		{name: "postgres missing outside CI", engine: "postgres", wantSkip: "the postgres server (initdb), which is missing: install it with: apt-get install -y postgresql"},
		{name: "postgres missing under CI", engine: "postgres", env: ci, wantFail: "apt-get install -y postgresql"},
		{name: "mariadb in /usr/sbin", engine: "mariadb", env: ci, files: []string{"/usr/sbin/mariadbd"}},
		{name: "mysqld counts for mariadb", engine: "mariadb", env: ci, files: []string{"/usr/sbin/mysqld"}},
		{name: "mariadb missing under CI", engine: "mariadb", env: ci, wantFail: "apt-get install -y mariadb-server mariadb-backup"},
		{name: "unknown engine is a mistake in the test", engine: "oracle", wantFail: `no engine "oracle"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			fakeMachine(tt.env, tt.inPath, tt.files...).RequireEngine(&r, tt.engine)
			check(t, "skip", r.skipped, tt.wantSkip)
			check(t, "failure", r.failed, tt.wantFail)
		})
	}
}

func TestRequireCondition(t *testing.T) {
	for _, env := range []map[string]string{nil, {"CI": "true"}} {
		var r recorder
		m := fakeMachine(env, nil)
		m.Require(&r, true, "root", "run as root")
		if r.skipped != "" || r.failed != "" {
			t.Errorf("a met requirement stopped the test: %+v", r)
		}
		m.Require(&r, false, "root and cgroup block-I/O control", "run the tests as root")
		stopped := r.skipped
		if m.CI() {
			stopped = r.failed
		}
		if !strings.Contains(stopped, "needs root and cgroup block-I/O control") || !strings.Contains(stopped, "run the tests as root") {
			t.Errorf("CI=%v: skipped %q, failed %q", m.CI(), r.skipped, r.failed)
		}
	}
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if want == "" && got != "" {
		t.Errorf("unexpected %s: %s", what, got)
	}
	if want != "" && !strings.Contains(got, want) {
		t.Errorf("%s %q, want it to contain %q", what, got, want)
	}
}

// A test that loads the machine waits for the timing tests to end, and
// timing tests run side by side.
func TestMachineLock(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	try := func(how int) error {
		f, err := os.OpenFile(machineLock(), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	}
	t.Run("quiet", func(t *testing.T) {
		QuietMachine(t)
		if err := try(syscall.LOCK_SH); err != nil {
			t.Errorf("a second timing test cannot run beside the first: %v", err)
		}
		if err := try(syscall.LOCK_EX); err == nil {
			t.Error("a test that loads the machine could start beside a timing test")
		}
	})
	t.Run("load", func(t *testing.T) {
		LoadMachine(t)
		if err := try(syscall.LOCK_SH); err == nil {
			t.Error("a timing test could start beside a test that loads the machine")
		}
	})
	if err := try(syscall.LOCK_EX); err != nil {
		t.Errorf("the lock outlives the tests that held it: %v", err)
	}
}
