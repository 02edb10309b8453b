package fleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The lock script tells a lock another process holds (flock's exit status
// 1) from flock failing otherwise: a host without flock is not a busy
// target, and its error says what to install. The script runs in this
// machine's sh with a PATH that lacks flock, as a host without util-linux's
// flock would run it.
func TestLockScriptWithoutFlock(t *testing.T) {
	bin := t.TempDir()
	for _, prog := range []string{"cat", "stat"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	lock := filepath.Join(t.TempDir(), ".dbio-lock")
	cmd := exec.Command("sh", "-c", fmt.Sprintf(lockScript, ShellQuote(lock), ShellQuote(`{"pid":1}`)))
	cmd.Env = []string{"PATH=" + bin}
	cmd.Stdin = strings.NewReader("")
	// What LockTarget reads is the script's output; what the shell says
	// goes to ssh's error output.
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if err == nil || first == "busy" || first == "locked" || !strings.Contains(first, "flock") {
		t.Errorf("without flock the lock script printed %q (%v; %s), want a failure naming flock", out, err, stderr.String())
	}
}
