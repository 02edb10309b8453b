package fleet

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// A target on a host is held for a run as a local one is: an exclusive
// flock(2) on the lock file in dbio's directory there, which names the
// run that holds it. The lock is held by a shell on the host for as long
// as its ssh session lasts, and the session ends when dbio releases the
// lock or ends, however it ends (its input closes), so a crash leaves no
// lock behind. The lock file is the one a dbio running on that host takes
// on the same target, so a fleet run and a local run exclude each other
// too.

// ErrTargetBusy is returned when another dbio run holds a remote target;
// the error names the holder as its lock file records it.
var ErrTargetBusy = errors.New("target in use by another dbio run")

// BusyTargetError is a remote target another run holds.
type BusyTargetError struct {
	Target string
	// Holder is the lock file's content: the holding run as it recorded
	// itself (JSON), empty when it had not yet written it.
	Holder string
}

func (e *BusyTargetError) Error() string {
	who := "another dbio run"
	if e.Holder != "" {
		who += " (" + e.Holder + ")"
	}
	return fmt.Sprintf("target %s is in use by %s: wait until it has finished, or choose another target", e.Target, who)
}

// Is makes errors.Is(err, ErrTargetBusy) true.
func (e *BusyTargetError) Is(target error) bool { return target == ErrTargetBusy }

// RemoteLock is a target held on a host for one run: the session of the
// shell that holds its lock.
type RemoteLock struct {
	sess *Session
}

// lockScript takes the lock on file for as long as its input lasts: it
// prints "locked" once it holds it, or "busy" and the holder's record
// when another process does (flock -n's exit status 1: any other is flock
// failing, or missing, which is no holder); then it waits for its input to end, empties
// the file (an emptied lock file names nobody) and exits, which releases
// the lock.
//
// A symbolic link at the lock file's path is never followed, whenever it
// is planted: the file is made only where nothing is, with noclobber's
// O_CREAT|O_EXCL (which fails on any link); it is opened without O_CREAT
// and kept only when the descriptor is the very file at the path (same
// device and inode as lstat gives); from then on it is read, written and
// emptied through that descriptor (/proc/PID/fd/9 reopens the descriptor's
// own file, not whatever the path names now).
const lockScript = `l=%s; holder=%s
if [ ! -e "$l" ] && [ ! -L "$l" ]; then (set -C; : > "$l") 2>/dev/null; fi
if [ -L "$l" ] || [ ! -f "$l" ]; then echo "$l is a symbolic link or not a regular file: dbio does not follow it; remove it"; exit 4; fi
exec 9<"$l" || exit 5
fd=/proc/$$/fd/9
if [ "$(stat -L -c %%d:%%i "$fd")" != "$(stat -c %%d:%%i "$l")" ]; then echo "$l was replaced while dbio opened it (by a symbolic link?): dbio does not follow it; remove it"; exit 4; fi
flock -n -x 9; rc=$?
if [ $rc -eq 1 ]; then echo busy; cat <&9; exit 75; fi
if [ $rc -ne 0 ]; then echo "flock -n -x failed (exit status $rc): install util-linux's flock on the host"; exit 5; fi
printf '%%s\n' "$holder" > "$fd"
echo locked
cat >/dev/null
: > "$fd"
exit 0
`

// LockTarget takes dbio's directory dir (the target's dbio/) on h for the
// run, through its lock file lockName, recording holder (the run, as JSON)
// in it. It returns once the lock is held, or fails at once with a
// *BusyTargetError when another run holds it.
func (s Shell) LockTarget(ctx context.Context, h Host, dir, lockName, holder string) (*RemoteLock, error) {
	where := h.Name + ":" + path.Dir(dir)
	script := fmt.Sprintf(lockScript, ShellQuote(path.Join(dir, lockName)), ShellQuote(holder))
	lines := make(chan string, 64)
	sess, err := s.StartSession(context.WithoutCancel(ctx), h, script, SessionOutput{Line: func(l string) {
		select {
		case lines <- strings.TrimSpace(l):
		default: // nobody asks for more than the answer and what follows it
		}
	}})
	if err != nil {
		return nil, fmt.Errorf("target %s: lock: %w", where, err)
	}
	l := &RemoteLock{sess: sess}
	// rest is what the script printed after its first line: the holder's
	// record after "busy", or why it failed.
	rest := func() string {
		var rec []string
		for len(lines) > 0 {
			rec = append(rec, <-lines)
		}
		return strings.TrimSpace(strings.Join(rec, " "))
	}
	timeout := time.NewTimer(clockTimeout)
	defer timeout.Stop()
	for {
		select {
		case line := <-lines:
			switch line {
			case "locked":
				return l, nil
			case "busy":
				l.Release()
				return nil, &BusyTargetError{Target: where, Holder: rest()}
			}
			return nil, errors.Join(l.Release(), fmt.Errorf("target %s: lock: %s %s", where, line, rest()))
		case <-sess.Ended():
			// What it printed before it exited may still be on its way.
			if len(lines) > 0 {
				continue
			}
			l.Release() // closes ssh's input, which nobody else will
			return nil, fmt.Errorf("target %s: lock (ssh %s): %w: %s; check that ssh reaches the host (ssh -o BatchMode=yes %s true)", where, h.Destination, sess.Err(), strings.TrimSpace(sess.Output()), h.Destination)
		case <-ctx.Done():
			l.Release()
			return nil, fmt.Errorf("target %s: lock: %w", where, ctx.Err())
		case <-timeout.C:
			l.Release()
			return nil, fmt.Errorf("target %s: lock: no answer within %s", where, clockTimeout)
		}
	}
}

// Release gives the target up and waits until the host has let it go.
// Later calls return at once.
func (l *RemoteLock) Release() error {
	if l == nil {
		return nil
	}
	if l.sess.Stop(stopTimeout) {
		return errors.New("the ssh session holding a remote target's lock did not end: check for a shell holding dbio/.dbio-lock there")
	}
	return nil
}
