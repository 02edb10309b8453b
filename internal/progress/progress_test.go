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
