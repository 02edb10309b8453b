// Package remote is dbio on a host: its own binary copied to a fleet's host
// over the user's ssh when missing there or of another version, run there
// as a tenant of a fleet run (one dbio per host, on that host's target),
// held at a start barrier until the coordinator releases every host at one
// instant, and its results directory brought back through ssh and tar.
//
// Both sides of the barrier live here: the coordinator's (Tenant, which
// waits for a host's ready line and sends the start instant on its input)
// and the host's (Barrier, which prints the ready line, waits for the
// instant, and ends the run when its input closes, so that a coordinator
// that dies, however it dies, leaves no dbio or database behind).
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"dbio/internal/execx"
	"dbio/internal/fleet"
)

// Shell runs dbio's scripts on hosts with the user's ssh, through
// fleet.Shell: the user's keys, agent and configuration, in batch mode.
type Shell struct {
	fleet.Shell
}

// runInput runs script on h with stdin as its input: the one script that
// needs input (the copy of dbio's program) is the one not run through
// fleet.Shell.Run, which runs every other script of dbio's on a host.
func (s Shell) runInput(ctx context.Context, h fleet.Host, script string, stdin io.Reader) (string, error) {
	cmd := s.Command(h, script)
	cmd.Stdin = stdin
	res, err := s.Exec.Run(ctx, cmd)
	if err != nil {
		return "", fmt.Errorf("host %s (ssh %s): %w", h.Name, h.Destination, err)
	}
	return string(res.Stdout), nil
}

// Home is dbio's own directory on a host, under the SSH login's home: the
// copies of its binary (bin/) and the results directories of the tenants
// it runs there (runs/) while they run.
const Home = "$HOME/.dbio"

// Binary is the dbio program copied to the hosts: this very build, so that
// the coordinator and its tenants read and write the same records.
type Binary struct {
	Path string
	// SHA256 is the program's hash in hex: a host's copy is named by it
	// and checked against it, so another build is never taken for this one.
	SHA256 string
}

// ReadBinary hashes the program at path.
func ReadBinary(path string) (Binary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Binary{}, fmt.Errorf("dbio's own program: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return Binary{}, fmt.Errorf("dbio's own program %s: %w", path, err)
	}
	return Binary{Path: path, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// name is the copy's file name on a host.
func (b Binary) name() string { return "dbio-" + b.SHA256[:16] }

// Installed is where a host's copy of dbio is, and whether this run copied it.
type Installed struct {
	Path   string
	Copied bool
}

// Install makes sure h has this build of dbio in dbio's directory there,
// copying it through ssh (into a temporary name, checked, then renamed)
// when it is missing or differs.
func (s Shell) Install(ctx context.Context, h fleet.Host, b Binary) (Installed, error) {
	vars := fmt.Sprintf("d=%s/bin; f=\"$d\"/%s; want=%s\n", Home, fleet.ShellQuote(b.name()), fleet.ShellQuote(b.SHA256))
	// sha256sum is coreutils'; a copy that is a link is not dbio's.
	check := vars + `sum() { sha256sum "$1" | cut -c1-64; }
if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(sum "$f")" = "$want" ]; then echo "present $f"; else echo "missing $f"; fi
`
	out, err := s.Run(ctx, h, check)
	if err != nil {
		return Installed{}, fmt.Errorf("looking for dbio there: %w: the host needs sh and sha256sum", err)
	}
	state, path, _ := strings.Cut(strings.TrimSpace(lastLine(out)), " ")
	switch state {
	case "present":
		return Installed{Path: path}, nil
	case "missing":
	default:
		return Installed{}, fmt.Errorf("host %s: looking for dbio there printed %q", h.Name, out)
	}
	f, err := os.Open(b.Path)
	if err != nil {
		return Installed{}, fmt.Errorf("dbio's own program: %w", err)
	}
	defer f.Close()
	copyScript := vars + `sum() { sha256sum "$1" | cut -c1-64; }
mkdir -p "$d" || exit 5
t="$f.tmp.$$"
trap 'rm -f "$t"' EXIT
cat > "$t" || exit 6
chmod 755 "$t" || exit 6
if [ "$(sum "$t")" != "$want" ]; then echo "the copy's hash differs: the transfer broke"; exit 7; fi
mv -f "$t" "$f" && echo "copied $f"
`
	out, err = s.runInput(ctx, h, copyScript, f)
	if err != nil {
		return Installed{}, fmt.Errorf("copying dbio there: %w", err)
	}
	state, path, _ = strings.Cut(strings.TrimSpace(lastLine(out)), " ")
	if state != "copied" {
		return Installed{}, fmt.Errorf("host %s: copying dbio there printed %q", h.Name, out)
	}
	return Installed{Path: path, Copied: true}, nil
}

// ResultsDir is a directory dbio made on a host for a tenant's results.
type ResultsDir struct {
	Host fleet.Host
	Path string
}

// MakeResultsDir makes runs/<name> in dbio's directory on h. It must not
// exist: what dbio removes later is only what it made now.
func (s Shell) MakeResultsDir(ctx context.Context, h fleet.Host, name string) (ResultsDir, error) {
	if strings.ContainsAny(name, "/\n\x00") || name == "" || name == "." || name == ".." {
		return ResultsDir{}, fmt.Errorf("results directory name %q: give a plain name", name)
	}
	// dbio's directory and runs/ are made, or taken, only when they are not
	// links: Fetch and Remove refuse a directory behind one, and would
	// refuse this one after the run.
	script := fmt.Sprintf(`h=%s; r="$h"/runs
for p in "$h" "$r"; do
  if [ -L "$p" ]; then echo "link $p"; exit 0; fi
  mkdir -p "$p" || exit 5
done
d="$r"/%s
if [ -e "$d" ] || [ -L "$d" ]; then echo "exists $d"; exit 0; fi
mkdir "$d" && echo "made $d"
`, Home, fleet.ShellQuote(name))
	out, err := s.Run(ctx, h, script)
	if err != nil {
		return ResultsDir{}, fmt.Errorf("making the tenant's results directory: %w", err)
	}
	state, path, _ := strings.Cut(strings.TrimSpace(lastLine(out)), " ")
	switch state {
	case "made":
		return ResultsDir{Host: h, Path: path}, nil
	case "exists":
		return ResultsDir{}, fmt.Errorf("host %s: %s exists already, and dbio did not make it for this run: move it away", h.Name, path)
	case "link":
		return ResultsDir{}, fmt.Errorf("%w: host %s: %s is a symbolic link: dbio keeps the tenants' results in a directory of its own there and never follows a link out of it; make %s a directory (move the link away)", ErrNotOwn, h.Name, path, path)
	}
	return ResultsDir{}, fmt.Errorf("host %s: making the tenant's results directory printed %q", h.Name, out)
}

// ErrNotOwn marks a results directory dbio will not touch on a host: it is
// a symbolic link, lies behind one, or is not where dbio makes its own.
var ErrNotOwn = errors.New("not dbio's own directory")

// notOwnExit is the exit status of a script that refused a directory
// (ownDir), which then said why on its standard error after notOwnMark.
const (
	notOwnExit = 3
	notOwnMark = "dbio-not-own: "
)

// ownDir is the start of a script acting on a results directory dbio made:
// it sets d to the directory, and ends the script with notOwnExit, saying
// why on standard error, when d is not in runs/ of dbio's directory or
// when d, runs/ or dbio's directory is a symbolic link. A link may have
// replaced what dbio made after it made it; following it would reach what
// dbio did not make.
func ownDir(path string) string {
	return fmt.Sprintf(`h=%[1]s; d=%[2]s
refuse() { echo "%[3]s$1 $2" >&2; exit %[4]d; }
case "$d" in "$h"/runs/*) ;; *) refuse outside "$d";; esac
case "${d#"$h"/runs/}" in */*|.|..) refuse outside "$d";; esac
for p in "$h" "$h"/runs "$d"; do if [ -L "$p" ]; then refuse link "$p"; fi; done
`, Home, fleet.ShellQuote(path), notOwnMark, notOwnExit)
}

// notOwn reads why ownDir refused the directory, from the error of the
// script; nil when it did not refuse it.
func notOwn(h fleet.Host, d string, err error) error {
	var ee *execx.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != notOwnExit {
		return nil
	}
	i := strings.Index(ee.Stderr, notOwnMark)
	if i < 0 {
		return nil
	}
	why, path, _ := strings.Cut(strings.TrimSpace(lastLine(ee.Stderr[i+len(notOwnMark):])), " ")
	if why == "link" {
		return fmt.Errorf("%w: host %s: %s is a symbolic link: dbio does not follow it, and leaves it and what it points to as they are; the results directory dbio made there was %s: remove the link yourself once you know what it is", ErrNotOwn, h.Name, path, d)
	}
	return fmt.Errorf("%w: host %s: %s is not in %s/runs, where dbio makes the tenants' results directories: dbio leaves it as it is", ErrNotOwn, h.Name, path, Home)
}

// fetchScript counts the results directory, as the stream's first line
// (du's apparent bytes, find's entries), and sends it as a tar archive.
const fetchScript = `cd "$d" || exit 5
b=$(du -sb .) || exit 6
n=$(find . | wc -l) || exit 6
echo "` + countLine + ` ${b%%[!0-9]*} $n"
exec tar -cf - .
`

// Fetch brings the directory's contents back into local, which it makes
// (it must not exist) and removes again, with all it holds, on any error.
// The host counts what the directory holds before sending it through ssh
// and tar, and the stream is unpacked as it comes, within that count (see
// unpack): regular files and directories only. A directory that is now a
// link, or behind one, is not read.
func (s Shell) Fetch(ctx context.Context, d ResultsDir, local string) (Fetched, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// ssh writes into a pipe of the system's own, read as it comes.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Fetched{}, err
	}
	stderr := fleet.NewTail(64 << 10)
	cmd := s.Command(d.Host, ownDir(d.Path)+fetchScript)
	cmd.Stdout, cmd.Stderr = pw, stderr
	proc, err := s.Exec.Start(ctx, cmd)
	pw.Close()
	if err != nil {
		pr.Close()
		return Fetched{}, fmt.Errorf("host %s: fetching %s: %w", d.Host.Name, d.Path, err)
	}
	got, err := unpack(pr, local, freeAt)
	// The host's tar, if it still writes, meets a closed pipe.
	pr.Close()
	streamEnded := errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !streamEnded {
		cancel()
	}
	if werr := proc.Wait(); werr != nil && (err == nil || streamEnded) {
		ee := exitError(cmd, werr, stderr.String())
		if own := notOwn(d.Host, d.Path, ee); own != nil {
			err = own
		} else {
			err = fmt.Errorf("host %s: fetching %s: %w", d.Host.Name, d.Path, ee)
		}
		if streamEnded {
			// unpack removed what it made.
			return Fetched{}, err
		}
		// unpack made local and filled it, but the host's end says that
		// what came may not be whole.
		if rerr := os.RemoveAll(local); rerr != nil {
			err = fmt.Errorf("%w (and %s, which dbio made for them, could not be removed: %v)", err, local, rerr)
		}
		return Fetched{}, err
	}
	if err != nil {
		return Fetched{}, fmt.Errorf("host %s: unpacking %s into %s: %w", d.Host.Name, d.Path, local, err)
	}
	return got, nil
}

// freeAt is the space and inodes free to an unprivileged writer on the
// filesystem holding dir; a filesystem that counts no inodes has as many
// as are asked for.
func freeAt(dir string) (bytes, inodes uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	inodes = st.Ffree
	if st.Files == 0 {
		inodes = math.MaxUint64
	}
	return st.Bavail * uint64(st.Bsize), inodes, nil
}

// exitError is a started program's end as Run reports one: its exit code
// and the tail of what it said on its standard error.
func exitError(c execx.Cmd, err error, stderr string) error {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	return &execx.ExitError{Cmd: c.String(), ExitCode: ee.ExitCode(), Stderr: stderr, Err: err}
}

// Remove removes the directory dbio made on the host, and all it holds. A
// directory that is now a link, or behind one, is left as it is, and so is
// what the link points to; links inside the directory are removed, never
// followed (rm does not follow them).
func (s Shell) Remove(ctx context.Context, d ResultsDir) error {
	if d.Path == "" {
		return errors.New("no results directory to remove")
	}
	if _, err := s.Run(ctx, d.Host, ownDir(d.Path)+"rm -rf -- \"$d\"\n"); err != nil {
		if own := notOwn(d.Host, d.Path, err); own != nil {
			return own
		}
		return fmt.Errorf("removing %s: %w", d.Path, err)
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// ErrTarget marks a target on a host that a run cannot use as given: bad
// input, found before anything is written.
var ErrTarget = errors.New("target")

// CheckTarget says whether path on h is a directory a run can use: it must
// exist (unless create, when the host's dbio makes it) and be neither a
// link nor a file. A problem of the target wraps ErrTarget; an error
// reaching the host does not.
func (s Shell) CheckTarget(ctx context.Context, h fleet.Host, path string, create bool) error {
	script := fmt.Sprintf(`t=%s
if [ -L "$t" ]; then echo link; elif [ -d "$t" ]; then echo ok; elif [ -e "$t" ]; then echo other; else echo missing; fi
`, fleet.ShellQuote(path))
	out, err := s.Run(ctx, h, script)
	if err != nil {
		return fmt.Errorf("checking target %s:%s: %w", h.Name, path, err)
	}
	switch state := strings.TrimSpace(lastLine(out)); state {
	case "ok":
		return nil
	case "missing":
		if create {
			return nil
		}
		return fmt.Errorf("%w %s:%s does not exist: create it there (mkdir -p %s) or pass --create-target; dbio does not create a target on its own, so that a mistyped path or an unmounted mount point never benchmarks the disk underneath", ErrTarget, h.Name, path, path)
	case "link":
		return fmt.Errorf("%w %s:%s is a symbolic link: dbio does not follow it; give the directory it points to", ErrTarget, h.Name, path)
	case "other":
		return fmt.Errorf("%w %s:%s is not a directory: give a directory on the storage under test", ErrTarget, h.Name, path)
	default:
		return fmt.Errorf("host %s: checking target %s printed %q", h.Name, path, out)
	}
}
