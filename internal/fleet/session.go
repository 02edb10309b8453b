package fleet

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"dbio/internal/execx"

	"golang.org/x/sync/errgroup"
)

// Session is a run's hosts reached: each one's fio version checked against
// dbio's own, and its fio server up, in the order of the hosts given.
type Session struct {
	Shell Shell
	// Servers are the servers of the hosts reached, in the order given.
	Servers []*Server
	// Versions are fio's versions by host name.
	Versions map[string]string
	// Unreached are the hosts ssh could not reach, with ssh's error, in the
	// order given: the run goes on without them.
	Unreached []HostError
}

// HostError is a host that failed, and why.
type HostError struct {
	Host Host
	Err  error
}

// ErrNoHostLeft is returned when no host of a fleet can be reached.
var ErrNoHostLeft = errors.New("no host of the fleet could be reached")

// Unreachable says whether err is ssh failing to reach a host (ssh's own
// exit status, 255: the connection, the host key, the login) rather than a
// command failing there.
func Unreachable(err error) bool {
	var ee *execx.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode == 255
	}
	// A session dbio started and waited for (a lock) ends with exec's own.
	var pe *exec.ExitError
	return errors.As(err, &pe) && pe.ExitCode() == 255
}

// Open reaches every host at once: it checks that fio there is
// localVersion (fio's client and servers of different versions do not
// speak the same protocol, and their figures would not compare), and
// starts each host's fio server or connects to the one the user runs.
// A host ssh cannot reach is left out (Session.Unreached) and the others
// go on, unless none is left (ErrNoHostLeft). Any other failure (fio
// missing or of another version, a server that does not start) fails the
// whole session: the servers already started are stopped, and the error
// names every host that failed.
func (s Shell) Open(ctx context.Context, hosts []Host, localVersion string) (*Session, error) {
	sess := &Session{Shell: s, Versions: map[string]string{}}
	servers := make([]*Server, len(hosts))
	var mu sync.Mutex
	errs := make([]error, len(hosts))
	unreached := make([]error, len(hosts))
	var g errgroup.Group
	for i, h := range hosts {
		g.Go(func() error {
			v, err := s.FioVersion(ctx, h)
			if Unreachable(err) {
				unreached[i] = err
				return nil
			}
			if err != nil {
				errs[i] = fmt.Errorf("%w: check that fio is installed there (%s), or give the host's fio path", err, h.FioProgram())
				return nil
			}
			mu.Lock()
			sess.Versions[h.Name] = v
			mu.Unlock()
			if v != localVersion {
				errs[i] = fmt.Errorf("host %s runs %s, this machine %s: install the same fio version on every host (fio's client and server must match)", h.Name, v, localVersion)
				return nil
			}
			addr, err := s.ServerAddress(ctx, h)
			if err != nil {
				errs[i] = err
				return nil
			}
			srv, err := s.StartServer(ctx, h, addr)
			if err != nil {
				errs[i] = err
				return nil
			}
			servers[i] = srv
			return nil
		})
	}
	g.Wait()
	for i, srv := range servers {
		if srv != nil {
			sess.Servers = append(sess.Servers, srv)
		}
		if unreached[i] != nil {
			sess.Unreached = append(sess.Unreached, HostError{Host: hosts[i], Err: unreached[i]})
		}
	}
	if err := errors.Join(errs...); err != nil {
		sess.Close()
		return nil, err
	}
	if len(sess.Servers) == 0 {
		var why []error
		for _, u := range sess.Unreached {
			why = append(why, u.Err)
		}
		return nil, fmt.Errorf("%w: %w; check that ssh reaches them (ssh -o BatchMode=yes DESTINATION true)", ErrNoHostLeft, errors.Join(why...))
	}
	seen := map[string]string{}
	for _, srv := range sess.Servers {
		if other, ok := seen[srv.Address]; ok {
			sess.Close()
			return nil, fmt.Errorf("hosts %s and %s both resolve to %s: fio's client names a server's report and logs by its address, so give each host its own address", other, srv.Host.Name, srv.Address)
		}
		seen[srv.Address] = srv.Host.Name
	}
	return sess, nil
}

// Close stops every server dbio started, at once, and waits for them.
func (sess *Session) Close() error {
	errs := make([]error, len(sess.Servers))
	var wg sync.WaitGroup
	for i, srv := range sess.Servers {
		if srv == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = srv.Stop()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Server is the session's server of the named host.
func (sess *Session) Server(host string) *Server {
	for _, srv := range sess.Servers {
		if srv != nil && srv.Host.Name == host {
			return srv
		}
	}
	return nil
}

// PrepareTarget makes dbio's directory on a remote target, as it does on a
// local one: the target must be a directory (not a link); dbio's directory
// in it (dirName) is made with its marker file, or must be one dbio made
// (a directory with the marker, neither a link); sub is made inside it.
// It returns sub's path. Nothing is made outside the target, and nothing
// that dbio did not make is used.
func (s Shell) PrepareTarget(ctx context.Context, h Host, target, dirName, marker, sub string) (string, error) {
	dir := path.Join(target, dirName)
	work := path.Join(dir, sub)
	script := fmt.Sprintf(`t=%s; d=%s; m=%s; w=%s
if [ -L "$t" ] || [ ! -d "$t" ]; then echo "is not a directory (or is a symbolic link)"; exit 3; fi
if [ -e "$d" ] || [ -L "$d" ]; then
  if [ -L "$d" ] || [ ! -d "$d" ] || [ -L "$m" ] || [ ! -f "$m" ]; then echo "holds $d, which dbio did not make (no marker $m): move it away or choose another target"; exit 4; fi
else
  mkdir "$d" && : > "$m" || exit 5
fi
if [ -L "$w" ]; then echo "$w is a symbolic link: dbio does not follow it"; exit 4; fi
mkdir -p "$w" || exit 5
`, ShellQuote(target), ShellQuote(dir), ShellQuote(path.Join(dir, marker)), ShellQuote(work))
	if out, err := s.Run(ctx, h, script+"echo ok"); err != nil || strings.TrimSpace(out) != "ok" {
		if err == nil {
			err = errors.New(strings.TrimSpace(out))
		}
		return "", fmt.Errorf("target %s:%s: %w", h.Name, target, err)
	}
	return work, nil
}

// devicesScript prints the physical block devices behind a path, one
// kernel name a line, as dbio finds them on a local target: the path's
// device number (stat), then /sys/dev/block from a partition to its disk
// and from a stacked device (dm, md) to its slaves. A file system without
// a block device (tmpfs, overlay, NFS) prints none.
const devicesScript = `x=$(stat -c %%D %s) || exit 5
maj=$(( ((0x$x >> 8) & 0xfff) | ((0x$x >> 32) & ~0xfff) ))
min=$(( (0x$x & 0xff) | ((0x$x >> 12) & ~0xff) ))
[ "$maj" -eq 0 ] && exit 0
walk() (
  p=$(readlink -f "$1") || exit 0
  if [ -e "$p/partition" ]; then walk "$p/.."; exit 0; fi
  found=
  for s in "$p"/slaves/*; do [ -e "$s" ] || continue; found=1; walk "$s"; done
  [ -n "$found" ] || echo "${p##*/}"
)
[ -e /sys/dev/block/$maj:$min ] && walk /sys/dev/block/$maj:$min
exit 0
`

// TargetDevices are the physical block devices behind a path on h, by
// kernel name, sorted; none for a file system without a block device.
func (s Shell) TargetDevices(ctx context.Context, h Host, target string) ([]string, error) {
	out, err := s.Run(ctx, h, fmt.Sprintf(devicesScript, ShellQuote(target)))
	if err != nil {
		return nil, fmt.Errorf("the devices behind %s:%s: %w", h.Name, target, err)
	}
	var devs []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(devs, l) {
			devs = append(devs, l)
		}
	}
	sort.Strings(devs)
	return devs, nil
}
