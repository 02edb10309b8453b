// Package dialect reads the command lines of the Windows storage tools a
// SQL Server DBA already has test plans in, DiskSpd and SQLIO, as one fio
// job each: the same block size, queue, threads, read share, timing and
// caching. Every switch is said back with what it became; a switch dbio
// cannot translate is refused by name, never dropped.
package dialect

import (
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"dbio/internal/fio"
	"dbio/internal/units"
)

// Translation is a foreign command line read as one fio job.
type Translation struct {
	// Tool is "DiskSpd" or "SQLIO"; Line the command line as given.
	Tool string
	Line string
	// Config is the fio job profile's configuration; the caller adds the
	// targets and the host.
	Config fio.Config
	// Switches are the line's switches in order, then the defaults the tool
	// applies to what the line leaves out, each with what it became.
	Switches []Switch
	// Notes say where the job differs from the tool, or what the line named
	// that dbio measures its own way (the test file), and why.
	Notes []string
}

// Switch is one switch of the line and its meaning.
type Switch struct {
	// Given is the switch as typed ("-o8"), or "(default -o2)" for a
	// default of the tool the line relies on.
	Given string
	// Means says it in words; Fio is what it became in the job file.
	Means string
	Fio   string
}

// SwitchError is a switch dbio cannot translate, or a value it cannot read.
type SwitchError struct {
	Tool, Switch, Msg string
}

func (e *SwitchError) Error() string { return fmt.Sprintf("%s switch %s: %s", e.Tool, e.Switch, e.Msg) }

// Summary says the job in one line: "randrw 70 % reads, 8k, 4 jobs × 8 in
// flight, 60s after 5s warm-up, O_DIRECT + O_DSYNC".
func (t Translation) Summary() string {
	c := t.Config
	rw := c.RW[0]
	if fio.Mixed(rw) {
		rw = fmt.Sprintf("%s %d %% reads", rw, *c.ReadPct)
	}
	caching := "O_DIRECT"
	if c.Buffered {
		caching = "buffered (page cache)"
	}
	if c.WriteThrough {
		caching += " + O_DSYNC"
	}
	ramp := time.Duration(0)
	if c.Ramp != nil {
		ramp = *c.Ramp
	}
	return fmt.Sprintf("%s, %s, %d job(s) × %d in flight, %s after %s warm-up, %s", rw, units.FormatBytes(uint64(c.BlockSizes[0])),
		c.Jobs, c.IODepths[0], c.Runtime, ramp, caching)
}

// tokens splits a command line at spaces, keeping a "quoted part" whole
// (a Windows path with spaces).
func tokens(line string) []string {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, has = !quoted, true
		case (r == ' ' || r == '\t' || r == '\n' || r == '\r') && !quoted:
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

// dropProgram removes a leading program name (diskspd, C:\tools\diskspd.exe).
func dropProgram(args []string, name string) []string {
	if len(args) == 0 {
		return args
	}
	base := strings.ToLower(args[0])
	if i := strings.LastIndexAny(base, `\/`); i >= 0 {
		base = base[i+1:]
	}
	switch strings.TrimSuffix(base, ".exe") {
	case name, name + "32", name + "64":
		return args[1:]
	}
	return args
}

// count reads a whole number of at least min.
func count(v string, min int) (int, bool) {
	n, err := strconv.Atoi(v)
	return n, err == nil && n >= min
}

// targetNote says what becomes of a test file the line names.
func targetNote(tool, path string) string {
	return fmt.Sprintf("%s's target %s: dbio measures each --target directory instead, in its own working file <target>/dbio/fio/work.dat", tool, path)
}

// joinErrors keeps every problem of the line, in order.
func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

func durationS(s int) time.Duration { return time.Duration(s) * time.Second }

// commandLine reads a tool's command line for translation: every problem
// is kept (the user fixes the line once), and every switch may be given
// once.
type commandLine struct {
	tool string
	errs []error
	// given is each switch letter read so far and the switch as written.
	given map[byte]string
}

func newCommandLine(tool string) *commandLine {
	return &commandLine{tool: tool, given: map[byte]string{}}
}

// bad refuses switch sw, saying why.
func (c *commandLine) bad(sw, format string, a ...any) {
	c.errs = append(c.errs, &SwitchError{Tool: c.tool, Switch: sw, Msg: fmt.Sprintf(format, a...)})
}

// lineSwitch is one switch of a line: -o8 is letter 'o', value "8".
type lineSwitch struct {
	arg    string
	letter byte
	val    string
}

// switches yields the switches of line after the program's name, in order,
// each recorded in given before it is yielded. A word that is not a switch
// names a target (noted in notes: dbio measures its own); a letter given
// twice is refused and not yielded; a switch of wholes is read into its
// number (or refused) and not yielded: the caller reads the others its
// own way.
func (c *commandLine) switches(line, program string, notes *[]string, wholes map[byte]wholeSwitch) iter.Seq[lineSwitch] {
	return func(yield func(lineSwitch) bool) {
		for _, arg := range dropProgram(tokens(line), program) {
			if !strings.HasPrefix(arg, "-") || len(arg) < 2 {
				*notes = append(*notes, targetNote(c.tool, arg))
				continue
			}
			letter := arg[1]
			if prev, twice := c.given[letter]; twice {
				c.bad(arg, "given twice (also %s): keep one", prev)
				continue
			}
			c.given[letter] = arg
			s := lineSwitch{arg: arg, letter: letter, val: arg[2:]}
			if c.whole(s, wholes) {
				continue
			}
			if !yield(s) {
				return
			}
		}
	}
}

// wholeSwitch is a switch whose value is a whole number of at least min
// (DiskSpd's -o8, SQLIO's -s60), read into n; usage says what it takes.
type wholeSwitch struct {
	n     *int
	min   int
	usage string
}

// whole reads s when its letter is one of wholes: into its number, or
// refused with its usage, which says what it takes. It says whether s was
// one of them.
func (c *commandLine) whole(s lineSwitch, wholes map[byte]wholeSwitch) bool {
	w, ok := wholes[s.letter]
	if !ok {
		return false
	}
	if n, ok := count(s.val, w.min); ok {
		*w.n = n
	} else {
		c.bad(s.arg, "%s", w.usage)
	}
	return true
}

// record says back switch given: what it means and what it became in the
// job file.
func (t *Translation) record(given, means, fio string) {
	t.Switches = append(t.Switches, Switch{Given: given, Means: means, Fio: fio})
}

// toolDefault is a default of the tool a line relies on, said as a switch:
// "(default -o2)".
func toolDefault(s string) string { return "(default " + s + ")" }

// givenOr is the switch as given, or the tool's default when the line
// leaves it out.
func givenOr(given, fallback string) string {
	if given != "" {
		return given
	}
	return toolDefault(fallback)
}
