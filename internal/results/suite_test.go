package results

import (
	"os"
	"path/filepath"
	"testing"
)

// A run's directory is read inside the suite's directory whether suite.json
// records it relative to the suite (as dbio writes it) or as the absolute
// path of wherever the suite was first written, and never outside it.
func TestLoadSuiteFindsRunsInsideTheSuite(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"tpcc-a", "set-b/tpcc-b-r2", "old-run", "set-c/old-rep"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runs := []struct{ name, recorded, want string }{
		{"tpcc-a", "tpcc-a", filepath.Join(dir, "tpcc-a")},
		{"tpcc-b-r2", "set-b/tpcc-b-r2", filepath.Join(dir, "set-b", "tpcc-b-r2")},
		{"old", "/elsewhere/20260101-suite-x/old-run", filepath.Join(dir, "old-run")},
		{"old-rep", "/elsewhere/20260101-suite-x/set-c/old-rep", filepath.Join(dir, "set-c", "old-rep")},
		{"old-relative", "results/20260101-suite-x/old-run", filepath.Join(dir, "old-run")},
		{"never-started", "", ""},
	}
	var j suiteJSON
	for _, r := range runs {
		j.Plan.Runs = append(j.Plan.Runs, struct {
			Name string `json:"name"`
			Base string `json:"base"`
			Rep  int    `json:"rep"`
			Kind string `json:"kind"`
		}{Name: r.name, Kind: "tpcc"})
		j.Outcome.Runs = append(j.Outcome.Runs, struct {
			Name   string `json:"name"`
			Dir    string `json:"dir"`
			Status Status `json:"status"`
			Error  string `json:"error"`
		}{Name: r.name, Dir: r.recorded, Status: StatusCompleted})
	}
	if err := WriteJSON(filepath.Join(dir, SuiteFile), j); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSuite(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != len(runs) {
		t.Fatalf("%d runs loaded, want %d", len(s.Runs), len(runs))
	}
	for i, r := range runs {
		if got := s.Runs[i].Dir; got != r.want {
			t.Errorf("%s recorded as %q: directory %q, want %q", r.name, r.recorded, got, r.want)
		}
	}
}
