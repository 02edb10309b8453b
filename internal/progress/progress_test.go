package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	got := Format(Status{Step: 2, Steps: 5, Name: "users-3", Users: 3, Phase: "measure",
		Elapsed: 75 * time.Second, Remaining: 45500 * time.Millisecond, Figures: [][2]string{{"tpm", "12345"}, {"p99", "4.2ms"}}})
	want := "step 2/5 users-3 [measure] 1:15 elapsed, 0:46 left  tpm 12345  p99 4.2ms"
	if got != want {
		t.Errorf("Format =\n%q, want\n%q", got, want)
	}
}

// A log that is not a terminal gets a line every ten seconds, not every update.
func TestNotATerminalPrintsEveryTenSeconds(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 25 {
		l.Update(Status{Step: 1, Steps: 1, Name: "s", Elapsed: time.Duration(i) * time.Second}, t0.Add(time.Duration(i)*time.Second))
	}
	if n := bytes.Count(b.Bytes(), []byte("\n")); n != 3 {
		t.Errorf("%d lines for 25 s of updates, want 3:\n%s", n, b.String())
	}
}

// The run's time left is shown when it is longer than the step's.
func TestFormatShowsTheRunsTimeLeft(t *testing.T) {
	got := Format(Status{Step: 1, Steps: 3, Name: "users-1", Users: 1, Phase: "measure",
		Elapsed: 10 * time.Second, Remaining: 15 * time.Second, RunRemaining: 65 * time.Second})
	want := "step 1/3 users-1 [measure] 0:10 elapsed, 0:15 left (run 1:05 left)"
	if got != want {
		t.Errorf("Format =\n%q, want\n%q", got, want)
	}
}

// A finished step's line is printed with a newline, so that it stays when
// the next status is drawn.
func TestDoneLeavesALine(t *testing.T) {
	var b bytes.Buffer
	l := New(&b)
	l.Done(Status{Step: 2, Steps: 3, Name: "users-2", Users: 2, Figures: [][2]string{{"tpm", "27,535"}, {"p99", "27.6ms"}}})
	if got, want := b.String(), "users-2 (2/3):  tpm 27,535  p99 27.6ms\n"; got != want {
		t.Errorf("Done wrote %q, want %q", got, want)
	}
}

// Paced terminals sharing a pool are counted as terminals, on the status
// line and on the step's result line.
func TestTerminalsAreCountedAsTerminals(t *testing.T) {
	s := Status{Step: 1, Steps: 1, Name: "rate-50", Users: 200, Terminals: true, Phase: "measure", Elapsed: time.Second, Remaining: time.Second}
	if got, want := Format(s), "step 1/1 rate-50 terminals=200 [measure] 0:01 elapsed, 0:01 left"; got != want {
		t.Errorf("Format =\n%q, want\n%q", got, want)
	}
	var b bytes.Buffer
	s.Phase = ""
	New(&b).Done(s)
	if got, want := b.String(), "rate-50 (1/1, 200 terminals):\n"; got != want {
		t.Errorf("Done wrote %q, want %q", got, want)
	}
}

// A step named for its users is not followed by the users again.
func TestAStepNamedForItsUsersSaysThemOnce(t *testing.T) {
	s := Status{Step: 1, Steps: 2, Name: "terminals-20", Users: 20, Terminals: true, Phase: WarmUp, Remaining: time.Second}
	if got, want := Format(s), "step 1/2 terminals-20 [warm-up] 0:00 elapsed, 0:01 left"; got != want {
		t.Errorf("Format =\n%q, want\n%q", got, want)
	}
}

// A line fits the width it is given: wording gives way first, then the
// step's own time left and "[measure]", then the last figures, then the
// line's end.
func TestFitGivesWayInOrder(t *testing.T) {
	s := Status{Step: 3, Steps: 12, Name: "r70-4k-q32", Phase: Measure, Elapsed: 75 * time.Second, Remaining: 45 * time.Second,
		RunRemaining: 754 * time.Second, Figures: [][2]string{{"IOPS", "123,456"}, {"MB/s", "505.7"}, {"mean", "258µs"}, {"p99", "1.2ms"}}}
	for _, c := range []struct {
		width int
		want  string
	}{
		{0, "step 3/12 r70-4k-q32 [measure] 1:15 elapsed, 0:45 left (run 12:34 left)  IOPS 123,456  MB/s 505.7  mean 258µs  p99 1.2ms"},
		{121, "step 3/12 r70-4k-q32 [measure] 1:15 elapsed, 0:45 left (run 12:34 left)  IOPS 123,456  MB/s 505.7  mean 258µs  p99 1.2ms"},
		{96, "3/12 r70-4k-q32 [measure] 0:45 left (run 12:34)  IOPS 123,456  MB/s 505.7  mean 258µs  p99 1.2ms"},
		{79, "3/12 r70-4k-q32 run 12:34 left  IOPS 123,456  MB/s 505.7  mean 258µs  p99 1.2ms"},
		{54, "3/12 r70-4k-q32 run 12:34 left  IOPS 123,456"},
		{30, "3/12 r70-4k-q32 run 12:34 left"},
		{20, "3/12 r70-4k-q32 run…"},
	} {
		got := Fit(s, c.width)
		if got != c.want {
			t.Errorf("Fit(%d) =\n%q, want\n%q", c.width, got, c.want)
		}
		if c.width > 0 && columns(got) > c.width {
			t.Errorf("Fit(%d) takes %d columns", c.width, columns(got))
		}
	}
}

// Redrawn on a terminal 80 columns wide, every line stays within 79
// columns, and a shorter line blanks what the longer one left.
func TestTheLineFitsTheTerminal(t *testing.T) {
	var b bytes.Buffer
	l := NewTerminal(&b, 80)
	long := Status{Step: 1, Steps: 2, Name: "users-64", Users: 64, Phase: Measure, Remaining: time.Minute, RunRemaining: 3 * time.Minute,
		Figures: [][2]string{{"tpm", "1,234,567"}, {"nopm", "555,555"}, {"p99 from intended", "123.4ms"}, {"p99", "99.9ms"}}}
	l.Update(long, time.Time{})
	l.Update(Status{Step: 1, Steps: 2, Name: "users-64", Users: 64, Phase: Measure}, time.Time{})
	for _, seg := range strings.Split(b.String(), "\r") {
		if columns(seg) > 79 {
			t.Errorf("a redraw of %d columns on an 80-column terminal: %q", columns(seg), seg)
		}
	}
	segs := strings.Split(b.String(), "\r")
	if last, first := segs[len(segs)-1], segs[1]; columns(last) != columns(first) {
		t.Errorf("the shorter line (%q) does not blank the longer one (%q)", last, first)
	}
}

// A meter on a terminal redraws one line; in a log it prints a line at
// every tenth of the work, with the rate and the time left.
func TestMeter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	m := StartMeter(&log, "loading tpcc", 100, "warehouses", "rows", t0)
	for i := 1; i <= 100; i++ {
		m.Update(float64(i), float64(i)*500, t0.Add(time.Duration(i)*time.Second))
	}
	m.Finish()
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 9 {
		t.Errorf("%d lines for a load logged every tenth, want 9 (10%% to 90%%):\n%s", len(lines), log.String())
	}
	if want := "loading tpcc: 10% (10 of 100 warehouses), 500 rows/s, 1:30 left"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	var term bytes.Buffer
	l := NewTerminal(&term, 80)
	m = StartMeter(l.Messages(&term), "laying out /data/dbio-fio.0", 35840, "MB", "MB", t0)
	m.Update(1200, 1200, t0.Add(3*time.Second))
	m.Update(2400, 2400, t0.Add(6*time.Second))
	m.Finish()
	want := "\rlaying out /data/dbio-fio.0: 3% (1,200 of 35,840 MB), 400 MB/s, 1:27 left" +
		"\rlaying out /data/dbio-fio.0: 6% (2,400 of 35,840 MB), 400 MB/s, 1:24 left" +
		"\r" + strings.Repeat(" ", 73) + "\r"
	if term.String() != want {
		t.Errorf("on a terminal the meter drew\n%q, want\n%q", term.String(), want)
	}
}
