package main

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"dbio/internal/iolimit"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// screen is what a terminal shows after out: each carriage return sends
// the cursor back to the start of the line, and what follows overwrites it.
func screen(out string) []string {
	var lines []string
	for _, raw := range strings.Split(out, "\n") {
		var cur []rune
		for _, seg := range strings.Split(raw, "\r") {
			for i, r := range []rune(seg) {
				if i < len(cur) {
					cur[i] = r
				} else {
					cur = append(cur, r)
				}
			}
		}
		if line := strings.TrimRight(string(cur), " "); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

func TestScreenEmulatesCarriageReturns(t *testing.T) {
	got := screen("a\rstep 1 live\r            \rusers-1 (1/2): tpm 10\nstep 2 live\r")
	want := []string{"users-1 (1/2): tpm 10", "step 2 live"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("screen = %q, want %q", got, want)
	}
}

// On a terminal the live line is redrawn in place, and each finished step
// leaves its result line on screen, with figures grouped by thousands.
func TestFinishedStepsStayOnATerminal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real steps")
	}
	script := testenv.RequireProgram(t, "script", "apt-get install -y bsdutils")
	h := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (h.V1Blkio != "" || h.V2 != ""), "root and cgroup block-I/O control", "run the tests as root on a host with the blkio controller (cgroup v1) or io.max (v2)")
	res, dataDir := t.TempDir(), t.TempDir()
	st, err := target.HostFS().Resolve(dataDir)
	testenv.Require(t, err == nil && st.Device != "", "a temporary directory on a block device", "set TMPDIR to a directory on a disk")
	cmdline := strings.Join([]string{os.Args[0], "tpcc", "--target", dataDir, "--results", res,
		"--users", "1,2", "--ramp-time", "1s", "--runtime", "2s", "--limit", "riops=1000000,wiops=1000000"}, " ")
	// script runs dbio on a pseudo-terminal and copies what it draws.
	p := startProgram(t, script, "-qefc", cmdline, "/dev/null")
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	out := p.out.String()
	if !strings.Contains(out, "\r") {
		t.Fatalf("dbio did not draw a live line on the terminal:\n%q", out)
	}
	shown := strings.Join(screen(out), "\n")
	// The run opens with where and what: the target's filesystem and device
	// and the limit it will be capped at, then the plan.
	opening := "target:  " + dataDir + " (data): " + st.FSType + " on " + st.Device
	if !strings.Contains(shown, opening) || !strings.Contains(shown, "to be capped at 1,000,000 read IOPS / 1,000,000 write IOPS (block-I/O cgroup)") ||
		!strings.Contains(shown, "plan:    tpcc on sqlite, users 1,2: 1s ramp-up and 2s measured per step") {
		t.Errorf("the opening lines do not say where (%q) and what:\n%s", opening, shown)
	}
	for _, want := range []string{"users-1 (1/2):  tpm ", "users-2 (2/2):  tpm ", "== dbio tpcc: COMPLETED =="} {
		if !strings.Contains(shown, want) {
			t.Errorf("the screen does not keep %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, "[warm-up]") || strings.Contains(shown, "[measure]") {
		t.Errorf("a live line was left on screen instead of being replaced:\n%s", shown)
	}
}

// A fio point is not silent: a live line shows its phase and time left
// while it runs, and is replaced by the next line when it ends.
func TestFioPointsShowALiveLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	script := testenv.RequireProgram(t, "script", "apt-get install -y bsdutils")
	testenv.RequireProgram(t, "fio", testenv.InstallFio)
	cmdline := strings.Join([]string{os.Args[0], "disk", "--target", t.TempDir(), "--results", t.TempDir(),
		"--profile", "mix", "--bs", "4k", "--iodepth", "1", "--size", "64MB", "--ramp-time", "1s", "--runtime", "3s"}, " ")
	p := startProgram(t, script, "-qefc", cmdline, "/dev/null")
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
	out := p.out.String()
	if !strings.Contains(out, "r70-4k [measure]") || !strings.Contains(out, " left") {
		t.Errorf("no live line during the point:\n%q", out)
	}
	if shown := strings.Join(screen(out), "\n"); strings.Contains(shown, "[measure]") {
		t.Errorf("the live line was left on screen:\n%s", shown)
	}
}

// With --metrics-addr a run serves its live figures for Prometheus: a
// scrape while the second step runs finds the first step's figures or
// newer ones.
func TestLiveFiguresAreScrapedDuringARun(t *testing.T) {
	// It checks what is recorded and said, not how fast: it shares the
	// machine with the other parallel tests.
	t.Parallel()
	if testing.Short() {
		t.Skip("runs real steps")
	}
	p := startDBIO(t, "tpcc", "--target", t.TempDir(), "--results", t.TempDir(), "--users", "1,2", "--ramp-time", "1s", "--runtime", "3s", "--metrics-addr", "127.0.0.1:0")
	url := regexp.MustCompile(`live figures: (http://\S+/metrics)`)
	p.waitFor("the first step finished", func() bool {
		return url.MatchString(p.out.String()) && strings.Contains(p.out.String(), "users-1 (1/2")
	})
	resp, err := http.Get(url.FindStringSubmatch(p.out.String())[1])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`(?m)^dbio_tpm\{step="users-[12]",phase="(rampup|measure)"\} [0-9.e+]+$`).Match(b) || !strings.Contains(string(b), "dbio_cpu_user_pct") {
		t.Errorf("the scrape has no live TPM or CPU:\n%s", b)
	}
	if code := p.exit(); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, p.out)
	}
}
