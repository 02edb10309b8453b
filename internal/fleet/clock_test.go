package fleet

import (
	"errors"
	"slices"
	"testing"
	"time"

	"dbio/internal/results"
)

// The warning words an offset as ClockReading means it: the host's clock
// minus this machine's, positive when the host is ahead.
func TestAheadBehind(t *testing.T) {
	for _, c := range []struct {
		offset time.Duration
		want   string
	}{{80 * time.Millisecond, "ahead of"}, {-80 * time.Millisecond, "behind"}} {
		if got := aheadBehind(c.offset); got != c.want {
			t.Errorf("aheadBehind(%v) = %q, want %q", c.offset, got, c.want)
		}
	}
}

// A check of three clocks, one fine, one unreadable and one far behind:
// run.json records the two read, the terminal line names them, and the
// other two are warnings in the hosts' order, each with the caller's words.
func TestClockCheck(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	c := ClockCheck{At: "start", Hosts: []Host{{Name: "h1"}, {Name: "h2"}, {Name: "h3"}},
		Readings: []ClockReading{
			{Measured: at, Offset: 1234567 * time.Nanosecond, RoundTrip: 400 * time.Microsecond, Tries: 5},
			{},
			{Measured: at, Offset: -120 * time.Millisecond, RoundTrip: 2 * time.Millisecond, Tries: 5}},
		Errs: []error{nil, errors.New("no answer"), nil}}
	want := results.ClockOffset{At: "start", Measured: at.UTC(), OffsetMS: 1.235, RoundTripMS: 0.4, Tries: 5}
	if rec, ok := c.Record(0); !ok || rec != want {
		t.Errorf("Record(0) = %+v, %v; want %+v", rec, ok, want)
	}
	if _, ok := c.Record(1); ok {
		t.Error("Record(1) of an unread clock is ok")
	}
	if got, want := c.Line(), "clocks at the start against this machine's: h1 +1.2 ms, h3 -120.0 ms"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
	got := c.Warnings(", and is taken as it is", "synchronize them")
	wantW := []string{"host h2: its clock could not be read at the start of the run, and is taken as it is: no answer",
		"host h3's clock is 120 ms behind this machine's at the start of the run (±1.0 ms): synchronize them"}
	if !slices.Equal(got, wantW) {
		t.Errorf("Warnings() = %q, want %q", got, wantW)
	}
	if line := (ClockCheck{At: "end", Hosts: c.Hosts[1:2], Readings: c.Readings[1:2], Errs: c.Errs[1:2]}).Line(); line != "" {
		t.Errorf("Line() with no clock read = %q, want none", line)
	}
}
