package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An A/B study's runs are read inside its directory, wherever ab.json says
// they were when it ran; a run outside a side's directory, or through a
// link, is refused.
func TestReadABStudy(t *testing.T) {
	tests := []struct {
		name         string
		runsA, runsB []string
		link         bool
		wantA        []string // relative to the study
		wantErr      string
	}{
		{name: "relative to where ab ran", runsA: []string{"results/x-ab/a-1/r-a-1", "results/x-ab/a-2/r-a-2"}, runsB: []string{"results/x-ab/b-1/r-b-1"},
			wantA: []string{"a-1/r-a-1", "a-2/r-a-2"}},
		{name: "absolute, since moved", runsA: []string{"/old/place/x-ab/a-1/r-a-1"}, runsB: []string{"/old/place/x-ab/b-1/r-b-1"}, wantA: []string{"a-1/r-a-1"}},
		{name: "a run outside the study", runsA: []string{"a-1/.."}, runsB: []string{"b-1/r"}, wantErr: "not in a side's directory"},
		{name: "a run without a side", runsA: []string{"r"}, runsB: []string{"b-1/r"}, wantErr: "not in a side's directory"},
		{name: "no run on a side", runsA: []string{"a-1/r"}, wantErr: "no run on side B"},
		{name: "a side that is a link", runsA: []string{"a-1/r"}, runsB: []string{"b-1/r"}, link: true, wantErr: "is a link"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteJSON(filepath.Join(dir, ABStudyFile), ABStudy{RunsA: tc.runsA, RunsB: tc.runsB}); err != nil {
				t.Fatal(err)
			}
			if tc.link {
				if err := os.Symlink(t.TempDir(), filepath.Join(dir, "a-1")); err != nil {
					t.Fatal(err)
				}
			}
			if !IsABStudy(dir) {
				t.Fatal("not an A/B study")
			}
			s, err := ReadABStudy(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.wantA {
				if s.RunsA[i] != filepath.Join(dir, w) {
					t.Errorf("run A%d at %s, want %s", i+1, s.RunsA[i], filepath.Join(dir, w))
				}
			}
		})
	}
	if IsABStudy(t.TempDir()) {
		t.Error("an empty directory is taken for an A/B study")
	}
}
