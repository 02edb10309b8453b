package testfleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tools are the absolute paths of the programs a fleet runs.
type tools struct {
	ip, unshare, hostname, sh string
	sshd, ssh, sshKeygen      string
	fio, nodeExporter         string
}

// installHint is what brings every program a fleet runs onto Debian.
const installHint = "apt-get install -y iproute2 openssh-server fio prometheus-node-exporter (make test does)"

// requireTools checks that this machine can build a fleet: the test runs as
// root (namespaces, veths and a bridge need it), and ip (iproute2), unshare,
// hostname and sh (on every Debian), sshd, ssh and ssh-keygen
// (openssh-server), fio and prometheus-node-exporter are installed. When one
// is not, the test is skipped with the install command, or fails when CI=true,
// where a skipped fleet test would hide a broken install step.
func requireTools(t testing.TB) tools {
	t.Helper()
	var missing []string
	find := func(name string) string {
		path, err := lookPath(name)
		if err != nil {
			missing = append(missing, name)
		}
		return path
	}
	tl := tools{
		ip: find("ip"), unshare: find("unshare"), hostname: find("hostname"), sh: find("sh"),
		sshd: find("sshd"), ssh: find("ssh"), sshKeygen: find("ssh-keygen"),
		fio: find("fio"), nodeExporter: find("prometheus-node-exporter"),
	}
	var problems []string
	if os.Geteuid() != 0 {
		problems = append(problems, "it makes network namespaces, which needs root: run the tests as root")
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s not installed: install with %s", strings.Join(missing, ", "), installHint))
	}
	if len(problems) == 0 {
		return tl
	}
	msg := "testfleet: " + strings.Join(problems, "; ")
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return tl
}

// lookPath finds a program in PATH, then in the sbin and bin directories,
// which a non-login root shell's PATH may lack; sshd must be started by an
// absolute path, so the result is always one.
func lookPath(name string) (string, error) {
	if path, err := exec.LookPath(name); err == nil {
		return filepath.Abs(path)
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		path := filepath.Join(dir, name)
		if info, err := os.Stat(path); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s not found: install with %s", name, installHint)
}
