package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"dbio/internal/registry"
)

// SettingsChecker is implemented by engines that take the user's settings
// (--setting, a suite engine's settings). SettingProblems finds, before
// anything is written, every setting the engine would not take: a name
// that is not one of the engine's settings (with the closest one that is),
// a value that reaches outside dbio's directory on the run's targets (a
// file, directory, socket or log elsewhere), one that runs a program or
// loads code, and one dbio sets itself to confine the instance. Each
// error starts with "name=value: ".
type SettingsChecker interface {
	SettingProblems(ctx context.Context, settings map[string]string, on Confinement) []error
}

// Confinement is where an instance's files may be: dbio's directory on its
// data target and on its log target (<target>/dbio).
type Confinement struct {
	// Data and Log are the targets as the user named them; Log is "" when
	// the log stays on the data target.
	Data, Log string
}

// Dirs are dbio's directories on the targets, the only places a setting
// may name.
func (c Confinement) Dirs() []string {
	var dirs []string
	for _, t := range []string{c.Data, c.Log} {
		if t == "" {
			continue
		}
		abs, err := filepath.Abs(t)
		if err != nil {
			continue
		}
		dirs = append(dirs, filepath.Join(abs, "dbio"))
	}
	return dirs
}

// SettingKind is what the value of an engine's setting names, as far as
// keeping an instance inside dbio's directory goes.
type SettingKind int

const (
	// Plain names nothing on the machine: a number, a word, a list of
	// names, a format.
	Plain SettingKind = iota
	// Path names one file, directory or socket the server reads or
	// writes: taken only inside dbio's directory on the targets.
	Path
	// Paths names several, separated by SettingClass.Sep (each entry may
	// carry more after a ':', as InnoDB's data file paths do).
	Paths
	// FileName names a file in a directory the server chooses: a bare
	// name, without a directory part.
	FileName
	// Owned is a setting dbio sets itself to confine the instance (its
	// data directory, socket, port, addresses): refused.
	Owned
	// Program runs a program or commands: refused.
	Program
	// Library loads code into the server: refused.
	Library
)

// SettingClass is how dbio treats one setting of an engine.
type SettingClass struct {
	Kind SettingKind
	// Why says, for a refused setting, what it does or who sets it and
	// what to use instead; it completes "name=value: ".
	Why string
	// Sep separates the entries of a Paths setting.
	Sep string
}

// Problem says what is wrong with value for a setting of this class on
// an instance confined to on: nil when the engine may be given it.
func (c SettingClass) Problem(value string, on Confinement) error {
	switch c.Kind {
	case Owned, Program, Library:
		return errors.New(c.Why)
	case Path:
		return pathProblem(value, on)
	case Paths:
		for _, entry := range strings.Split(value, c.Sep) {
			// InnoDB's "ibdata1:12M:autoextend" names its file before the first colon.
			file, _, _ := strings.Cut(strings.TrimSpace(entry), ":")
			if err := pathProblem(file, on); err != nil {
				return err
			}
		}
	case FileName:
		if strings.ContainsRune(value, '/') {
			return fmt.Errorf("give a file name without a directory part (the server puts it in its own directory)%s", c.why())
		}
	}
	return nil
}

func (c SettingClass) why() string {
	if c.Why == "" {
		return ""
	}
	return ": " + c.Why
}

// pathProblem says why the server must not be given path: an absolute
// path must resolve (links followed, .. applied as the kernel does)
// inside dbio's directory on a target; a relative one is read by the
// server from a directory of its own inside it (its data directory, or a
// directory another setting names and that is checked itself), so it
// may not climb out with "..".
func pathProblem(path string, on Confinement) error {
	if path == "" {
		return nil
	}
	dirs := on.Dirs()
	if !filepath.IsAbs(path) {
		for _, part := range strings.Split(path, "/") {
			if part == ".." {
				return fmt.Errorf("a relative path climbing out with .. may leave dbio's directory: give an absolute path inside %s", strings.Join(dirs, " or "))
			}
		}
		return nil
	}
	resolved := ResolvePath(path)
	for _, d := range dirs {
		root := ResolvePath(d)
		if resolved == root || strings.HasPrefix(resolved, root+"/") {
			return nil
		}
	}
	where := path
	if resolved != filepath.Clean(path) {
		where = fmt.Sprintf("%s (%s once its links are followed)", path, resolved)
	}
	if len(dirs) == 0 {
		return fmt.Errorf("%s names a place on the machine, and this run has no target for it", where)
	}
	return fmt.Errorf("%s is outside dbio's directory on the targets: give a path inside %s, or leave the setting out", where, strings.Join(dirs, " or "))
}

// ResolvePath is where the absolute path leads as the kernel resolves it:
// each symbolic link followed where it stands, and ".." taken from the
// directory reached so far (not from the text, which a link would
// deceive). The part that does not exist yet is joined as written.
func ResolvePath(path string) string {
	return resolve(path, 0)
}

// maxLinks bounds the links followed, as the kernel's ELOOP does.
const maxLinks = 40

func resolve(path string, links int) string {
	cur := "/"
	parts := strings.Split(path, "/")
	for i, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			// Nothing below a missing directory exists either.
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		case err != nil || fi.Mode()&fs.ModeSymlink == 0:
			cur = next
		default:
			dest, err := os.Readlink(next)
			if err != nil || links >= maxLinks {
				cur = next
				continue
			}
			if !filepath.IsAbs(dest) {
				// Not filepath.Join, which would apply the link's own ".." to the text.
				dest = cur + "/" + dest
			}
			cur = resolve(dest, links+1)
		}
	}
	return cur
}

// Closest is " (did you mean K?)" for the name K of known nearest to
// name, within a third of its length in edits (at least two); "" when
// none is that near.
func Closest(name string, known []string) string {
	return registry.DidYouMean(name, known, max(2, len(name)/3))
}

// databaseName is the form of a database name dbio uses: a plain SQL
// identifier, which needs no quoting in SQL, in a DSN or on a command line
// and makes a safe file name (SQLite's database file is named after it).
var databaseName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// DatabaseNameProblem says why dbio cannot use name as the database it
// creates and owns; nil when it can (or when name is empty, the default).
func DatabaseNameProblem(name string) error {
	if name == "" || databaseName.MatchString(name) {
		return nil
	}
	return fmt.Errorf("database name %q: use letters, digits and _ (not starting with a digit), at most 63 characters, e.g. dbio_tpcc: the name goes into SQL, DSNs, tools' command lines and file names as it is", name)
}
