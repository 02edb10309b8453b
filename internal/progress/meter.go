package progress

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
)

// Messages is a run's stream of messages with the status line under it:
// what is written to it is printed above the line, and a Meter given it
// draws on the line.
type Messages struct {
	line *Line
	w    io.Writer
}

// Messages writes to w, clearing l's line first when it is drawn on w's
// terminal.
func (l *Line) Messages(w io.Writer) *Messages { return &Messages{line: l, w: w} }

func (m *Messages) Write(p []byte) (int, error) {
	if !m.line.Terminal() {
		return m.w.Write(p)
	}
	m.line.Printf("%s", p)
	return len(p), nil
}

// Meter shows how far a piece of work of a known size has got: "loading
// tpcc: 37% (444 of 1,200 warehouses), 45,678 rows/s, 2:13 left". On a
// terminal it is one line redrawn in place; in a log it is a line at
// every tenth of the work, so that a long load neither floods the log nor
// leaves it silent.
type Meter struct {
	// Task names the work: "loading tpcc".
	Task string
	// Total is the work's size in Unit ("warehouses", "MB").
	Total float64
	Unit  string
	// Rate names what the rate counts ("rows", "MB").
	Rate string

	mu     sync.Mutex
	out    io.Writer
	line   *Line
	start  time.Time
	tenths int
}

// StartMeter starts a meter at now, writing to w: on its status line
// when w is a Line's Messages on a terminal, plain lines otherwise.
func StartMeter(w io.Writer, task string, total float64, unit, rate string, now time.Time) *Meter {
	m := &Meter{Task: task, Total: total, Unit: unit, Rate: rate, out: w, start: now}
	if msgs, ok := w.(*Messages); ok && msgs.line.Terminal() {
		m.line = msgs.line
	}
	return m
}

// Update says done of Total is done and counted of the rate's unit, at now.
func (m *Meter) Update(done, counted float64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.line != nil {
		m.line.Show(m.Format(done, counted, now.Sub(m.start)), now)
		return
	}
	if m.Total <= 0 {
		return
	}
	if tenths := int(math.Floor(10 * done / m.Total)); tenths > m.tenths && done < m.Total {
		m.tenths = tenths
		fmt.Fprintln(m.out, m.Format(done, counted, now.Sub(m.start)))
	}
}

// Finish removes the meter's line; what the work did its caller says.
func (m *Meter) Finish() {
	if m.line != nil {
		m.line.Clear()
	}
}

// Format renders the meter after elapsed, with done of Total and counted
// of the rate's unit done.
func (m *Meter) Format(done, counted float64, elapsed time.Duration) string {
	var b strings.Builder
	pct := 0.0
	if m.Total > 0 {
		pct = 100 * done / m.Total
	}
	fmt.Fprintf(&b, "%s: %.0f%% (%s of %s %s)", m.Task, math.Floor(pct), group(done), group(m.Total), m.Unit)
	if s := elapsed.Seconds(); s > 0 && counted > 0 {
		fmt.Fprintf(&b, ", %s %s/s", group(counted/s), m.Rate)
	}
	if done > 0 && done < m.Total {
		left := time.Duration(float64(elapsed) * (m.Total - done) / done)
		fmt.Fprintf(&b, ", %s left", clock(left))
	}
	return b.String()
}

// group writes a count rounded to a whole number with thousands
// separators: "45,678".
func group(v float64) string {
	n := int64(math.Round(v))
	neg := n < 0
	if neg {
		n = -n
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
