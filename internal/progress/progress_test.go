package progress

import (
	"bytes"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	got := Format(Status{Step: 2, Steps: 5, Name: "users-3", Users: 3, Phase: "measure",
		Elapsed: 75 * time.Second, Remaining: 45500 * time.Millisecond, Figures: [][2]string{{"tpm", "12345"}, {"p99", "4.2ms"}}})
	want := "step 2/5 users-3 users=3 [measure] 1:15 elapsed, 0:46 left  tpm 12345  p99 4.2ms"
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
	want := "step 1/3 users-1 users=1 [measure] 0:10 elapsed, 0:15 left (run 1:05 left)"
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
	if got, want := b.String(), "users-2 (2/3, 2 users):  tpm 27,535  p99 27.6ms\n"; got != want {
		t.Errorf("Done wrote %q, want %q", got, want)
	}
}

// Paced terminals sharing a pool are counted as terminals, on the status
// line and on the step's result line.
func TestTerminalsAreCountedAsTerminals(t *testing.T) {
	s := Status{Step: 1, Steps: 1, Name: "terminals-200", Users: 200, Terminals: true, Phase: "measure", Elapsed: time.Second, Remaining: time.Second}
	if got, want := Format(s), "step 1/1 terminals-200 terminals=200 [measure] 0:01 elapsed, 0:01 left"; got != want {
		t.Errorf("Format =\n%q, want\n%q", got, want)
	}
	var b bytes.Buffer
	s.Phase = ""
	New(&b).Done(s)
	if got, want := b.String(), "terminals-200 (1/1, 200 terminals):\n"; got != want {
		t.Errorf("Done wrote %q, want %q", got, want)
	}
}
