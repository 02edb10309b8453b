package testfleet

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonSpec is one program a host runs for the life of the fleet.
type daemonSpec struct {
	what string   // sshd, fio, node-exporter: names the log file too
	port int      // where it accepts connections once ready
	dir  string   // its working directory
	argv []string // program (absolute) and arguments
}

// daemon is a started daemonSpec.
type daemon struct {
	name string // "h1 sshd"
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process is reaped; err is set then
	err  error
}

// startDaemon starts spec inside h's namespace, in a UTS namespace of its own
// whose hostname is h's name, with its output in <host dir>/<what>.log. The
// daemon is killed if the test process dies (PR_SET_PDEATHSIG survives the
// execs of ip netns exec, unshare and sh), and by the teardown otherwise.
func (f *Fleet) startDaemon(ctx context.Context, h Host, spec daemonSpec) (*daemon, error) {
	d := &daemon{
		name: h.Name + " " + spec.what,
		log:  filepath.Join(filepath.Dir(h.Storage), spec.what+".log"),
		done: make(chan struct{}),
	}
	out, err := os.Create(d.log)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child holds its own copy
	args := []string{"netns", "exec", h.Namespace,
		f.tools.unshare, "--uts",
		f.tools.sh, "-c", `"$0" "$1" && shift && exec "$@"`, f.tools.hostname, h.Name}
	d.cmd = exec.Command(f.tools.ip, append(args, spec.argv...)...)
	d.cmd.Dir = spec.dir
	d.cmd.Stdout, d.cmd.Stderr = out, out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// PR_SET_PDEATHSIG fires when the thread that started the daemon ends,
	// not the process, and Go ends threads: one a goroutine locked and left
	// (as execx does for every program it starts). The daemon is started on
	// a thread locked to the goroutine that waits for it, which no other
	// goroutine can lock or end while the daemon runs.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := d.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s: %w", d.name, err)
	}
	return d, nil
}

// waitListening waits until the daemon accepts a connection at addr, and
// fails as soon as it exits, with the end of its log.
func (d *daemon) waitListening(ctx context.Context, addr netip.AddrPort) error {
	var dialer net.Dialer
	for {
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := dialer.DialContext(attempt, "tcp", addr.String())
		cancel()
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("%s exited before listening on %s (%v): %s", d.name, addr, d.err, logTail(d.log, 10))
		case <-ctx.Done():
			return fmt.Errorf("%s not listening on %s: %w: %s", d.name, addr, ctx.Err(), logTail(d.log, 10))
		case <-time.After(10 * time.Millisecond): // the next try: connection refused until it listens
		}
	}
}

// logDaemons writes the end of every daemon's log to the test's log, for a
// failed test.
func (f *Fleet) logDaemons(t testing.TB) {
	t.Helper()
	for _, d := range f.daemons {
		if d != nil {
			t.Logf("testfleet: %s log (%s):\n%s", d.name, d.log, logTail(d.log, 20))
		}
	}
}

// logTail is the last lines of a log file, or why it cannot be read.
func logTail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
