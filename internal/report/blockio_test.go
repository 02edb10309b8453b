package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestBlockIOTable: dbio replays' table, for the terminal and as
// Markdown, from the recorded capture and its replays alone.
func TestBlockIOTable(t *testing.T) {
	runs := load(t, "capture-loop", "replay-loop", "replay-tmpfs-max")
	got := map[string][]byte{}
	for _, md := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteBlockIOTable(&b, runs, md); err != nil {
			t.Fatal(err)
		}
		name := "replays.txt"
		if md {
			name = "replays.md"
		}
		got[name] = b.Bytes()
	}
	checkGolden(t, "replays", got)
	var text bytes.Buffer
	if err := Text(&text, runs[1], testOptions()); err != nil {
		t.Fatal(err)
	}
	if want := "fell behind by 3.19 s (64 %)."; !strings.Contains(text.String(), want) {
		t.Errorf("the terminal's summary of a replay lacks its verdict %q:\n%s", want, text.String())
	}
	if err := WriteBlockIOTable(&text, load(t, "capture-loop", "quick-tmpfs"), false); err == nil || !strings.Contains(err.Error(), "quick-tmpfs is neither a capture nor a replay") {
		t.Errorf("a run with neither capture nor replay: err = %v, want it named", err)
	}
}
