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
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"
)

// The phases a live line names, in the same words for every kind of step:
// the warm-up (a workload's ramp-up, fio's ramp_time) is left out of the
// figures, the measurement is what they are.
const (
	WarmUp  = "warm-up"
	Measure = "measure"
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
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	every time.Duration
	last  time.Time
	// drawn is how many columns the line on screen takes.
	drawn int
	// width is the terminal's width in columns; 0 asks the terminal.
	width    int
	disabled bool
}

// New writes to w; redraws in place when w is a terminal.
func New(w io.Writer) *Line {
	return &Line{w: w, tty: isTerminal(w), every: 10 * time.Second}
}

// NewTerminal is a Line that draws on w as on a terminal width columns
// wide, whatever w is.
func NewTerminal(w io.Writer, width int) *Line {
	return &Line{w: w, tty: true, width: width, every: 10 * time.Second}
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

// defaultWidth is assumed of a terminal that does not say its width.
const defaultWidth = 80

// columns is the terminal's width now (it changes when its window is
// resized), asked at every redraw.
func (l *Line) columns() int {
	if l.width > 0 {
		return l.width
	}
	if n, ok := TerminalColumns(l.w); ok {
		return n
	}
	return defaultWidth
}

// TerminalColumns is the width of the terminal w writes to, ok false when
// w is no terminal or it does not say.
func TerminalColumns(w io.Writer) (n int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile {
		return 0, false
	}
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); errno != 0 || ws.Col == 0 {
		return 0, false
	}
	return int(ws.Col), true
}

// Format renders a status as one line, however long.
func Format(s Status) string { return Fit(s, 0) }

// Fit renders a status in at most width columns (0: no limit). What gives
// way first is wording (elapsed time, "step"), then the step's own time
// left (the run's stays) and "[measure]", then figures from the last, then the end of the
// line itself: a line wider than the terminal would wrap, and redrawing it
// in place would leave its first part behind.
func Fit(s Status, width int) string {
	full := s.head(wordy) + s.figures(len(s.Figures))
	if width <= 0 || columns(full) <= width {
		return full
	}
	if line := s.head(short) + s.figures(len(s.Figures)); columns(line) <= width {
		return line
	}
	tight := s.head(runOnly)
	for n := len(s.Figures); n >= 0; n-- {
		if line := tight + s.figures(n); columns(line) <= width {
			return line
		}
	}
	return truncate(tight, width)
}

// How much a status line's head says.
type wording int

const (
	wordy   wording = iota // "step 1/3 users-1 [measure] 0:10 elapsed, 0:15 left (run 1:05 left)"
	short                  // "1/3 users-1 [measure] 0:15 left (run 1:05)"
	runOnly                // "1/3 users-1 run 1:05 left"
)

func (s Status) head(say wording) string {
	var b strings.Builder
	if say == wordy {
		b.WriteString("step ")
	}
	fmt.Fprintf(&b, "%d/%d %s", s.Step, s.Steps, s.Name)
	// "users-3" says the users already.
	if s.Users > 0 && s.Name != fmt.Sprintf("%s-%d", s.who(), s.Users) {
		fmt.Fprintf(&b, " %s=%d", s.who(), s.Users)
	}
	// Tight, a measurement goes without saying: only a warm-up is named.
	if s.Phase != "" && !(say == runOnly && s.Phase == Measure) {
		fmt.Fprintf(&b, " [%s]", s.Phase)
	}
	switch say {
	case runOnly:
		if s.RunRemaining > s.Remaining {
			fmt.Fprintf(&b, " run %s left", clock(s.RunRemaining))
		} else {
			fmt.Fprintf(&b, " %s left", clock(s.Remaining))
		}
		return b.String()
	case short:
		fmt.Fprintf(&b, " %s left", clock(s.Remaining))
		if s.RunRemaining > s.Remaining {
			fmt.Fprintf(&b, " (run %s)", clock(s.RunRemaining))
		}
		return b.String()
	}
	fmt.Fprintf(&b, " %s elapsed, %s left", clock(s.Elapsed), clock(s.Remaining))
	if s.RunRemaining > s.Remaining {
		fmt.Fprintf(&b, " (run %s left)", clock(s.RunRemaining))
	}
	return b.String()
}

// figures renders the first n figures.
func (s Status) figures(n int) string {
	var b strings.Builder
	for _, f := range s.Figures[:n] {
		fmt.Fprintf(&b, "  %s %s", f[0], f[1])
	}
	return b.String()
}

// columns counts what text takes on a terminal: a column a rune.
func columns(text string) int { return utf8.RuneCountInString(text) }

func truncate(text string, width int) string {
	if columns(text) <= width {
		return text
	}
	r := []rune(text)
	if width < 1 {
		return ""
	}
	return string(r[:width-1]) + "…"
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
	if d >= time.Hour {
		return fmt.Sprintf("%d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// Update shows s.
func (l *Line) Update(s Status, now time.Time) {
	if l.disabled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty {
		l.drawLocked(Fit(s, l.columns()-1))
		return
	}
	l.logLocked(Format(s), now)
}

// Show draws a line of text as the status line: redrawn in place on a
// terminal (cut to its width), printed every few seconds otherwise.
func (l *Line) Show(text string, now time.Time) {
	if l.disabled {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty {
		l.drawLocked(truncate(text, l.columns()-1))
		return
	}
	l.logLocked(text, now)
}

// drawLocked redraws the line in place; it is kept a column short of
// the terminal's width, so that the cursor never wraps to a new line.
func (l *Line) drawLocked(text string) {
	pad := ""
	if n := l.drawn - columns(text); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	fmt.Fprintf(l.w, "\r%s%s", text, pad)
	l.drawn = columns(text)
}

func (l *Line) logLocked(text string, now time.Time) {
	if now.Sub(l.last) >= l.every {
		fmt.Fprintln(l.w, text)
		l.last = now
	}
}

// Terminal says whether the line is redrawn in place.
func (l *Line) Terminal() bool { return l != nil && !l.disabled && l.tty }

// Done prints a finished step's result line, which stays on screen while
// the next step's status line is drawn under it: "users-2 (2/3):
// tpm 27,535  nopm 12,324  p99 27.6ms".
func (l *Line) Done(s Status) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d/%d", s.Name, s.Step, s.Steps)
	if s.Users > 0 && s.Name != fmt.Sprintf("%s-%d", s.who(), s.Users) {
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
