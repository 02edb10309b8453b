package fleet

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Session is a run's hosts reached: each one's fio version checked against
// dbio's own, and its fio server up, in the order of the hosts given.
type Session struct {
	Shell   Shell
	Servers []*Server
	// Versions are fio's versions by host name.
	Versions map[string]string
}

// Open reaches every host at once: it checks that fio there is
// localVersion (fio's client and servers of different versions do not
// speak the same protocol, and their figures would not compare), and
// starts each host's fio server or connects to the one the user runs.
// When one host fails, the servers already started are stopped, and the
// error names every host that failed.
func (s Shell) Open(ctx context.Context, hosts []Host, localVersion string) (*Session, error) {
	sess := &Session{Shell: s, Servers: make([]*Server, len(hosts)), Versions: map[string]string{}}
	var mu sync.Mutex
	errs := make([]error, len(hosts))
	var g errgroup.Group
	for i, h := range hosts {
		g.Go(func() error {
			v, err := s.FioVersion(ctx, h)
			if err != nil {
				errs[i] = fmt.Errorf("%w: check that ssh reaches it and that fio is installed there (%s), or give the host's fio path", err, h.FioProgram())
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
			sess.Servers[i] = srv
			return nil
		})
	}
	g.Wait()
	if err := errors.Join(errs...); err != nil {
		sess.Close()
		return nil, err
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
