// Package progress is the live terminal view of a run: one status line,
// redrawn in place on a terminal and printed every few seconds otherwise, so
// that logs of unattended runs stay readable.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Status is what the line shows.
type Status struct {
	Step, Steps int
	Name        string
	Users       int
	// Terminals says Users counts paced terminals sharing a pool of
	// connections, and is shown as terminals.
	Terminals bool
	Phase     string
	Elapsed   time.Duration
	Remaining time.Duration
	// RunRemaining is the time left in the whole run, when it is longer
	// than the step's.
	RunRemaining time.Duration
	// Figures are short "name value" pairs, e.g. {"TPM", "12,345"}.
	Figures [][2]string
}

// Line renders Status updates.
type Line struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	every    time.Duration
	last     time.Time
	drawn    int
	disabled bool
}

// New writes to w; redraws in place when w is a terminal.
func New(w io.Writer) *Line {
	return &Line{w: w, tty: isTerminal(w), every: 10 * time.Second}
}

// Discard is a Line that shows nothing.
func Discard() *Line { return &Line{disabled: true} }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Format renders a status as one line.
func Format(s Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %d/%d %s", s.Step, s.Steps, s.Name)
	if s.Users > 0 {
		fmt.Fprintf(&b, " %s=%d", s.who(), s.Users)
	}
	if s.Phase != "" {
		fmt.Fprintf(&b, " [%s]", s.Phase)
	}
	fmt.Fprintf(&b, " %s elapsed, %s left", clock(s.Elapsed), clock(s.Remaining))
	if s.RunRemaining > s.Remaining {
		fmt.Fprintf(&b, " (run %s left)", clock(s.RunRemaining))
	}
	for _, f := range s.Figures {
		fmt.Fprintf(&b, "  %s %s", f[0], f[1])
	}
	return b.String()
}

// who is what Users counts, in the plural.
func (s Status) who() string {
	if s.Terminals {
		return "terminals"
	}
	return "users"
}

func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// Update shows s.
func (l *Line) Update(s Status, now time.Time) {
	if l.disabled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	text := Format(s)
	if l.tty {
		pad := ""
		if n := l.drawn - len(text); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		fmt.Fprintf(l.w, "\r%s%s", text, pad)
		l.drawn = len(text)
		return
	}
	if now.Sub(l.last) >= l.every {
		fmt.Fprintln(l.w, text)
		l.last = now
	}
}

// Done prints a finished step's result line, which stays on screen while
// the next step's status line is drawn under it: "users-2 (2/3, 2 users):
// tpm 27,535  nopm 12,324  p99 27.6ms".
func (l *Line) Done(s Status) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d/%d", s.Name, s.Step, s.Steps)
	if s.Users > 0 {
		fmt.Fprintf(&b, ", %d %s", s.Users, s.who())
	}
	b.WriteString("):")
	for _, f := range s.Figures {
		fmt.Fprintf(&b, "  %s %s", f[0], f[1])
	}
	if s.Phase != "" {
		fmt.Fprintf(&b, "  [%s]", s.Phase)
	}
	l.Printf("%s\n", b.String())
}

// Printf prints a message on its own line, clearing the status line first.
func (l *Line) Printf(format string, a ...any) {
	if l.disabled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearLocked()
	fmt.Fprintf(l.w, format, a...)
}

// Clear removes the status line.
func (l *Line) Clear() {
	if l.disabled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearLocked()
}

func (l *Line) clearLocked() {
	if l.tty && l.drawn > 0 {
		fmt.Fprintf(l.w, "\r%s\r", strings.Repeat(" ", l.drawn))
		l.drawn = 0
	}
}
