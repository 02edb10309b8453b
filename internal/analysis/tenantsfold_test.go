package analysis

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// The recorded tenants run folds again into its step: the hosts' rows add
// up to the fleet's figures, each host's status is its own run's, and its
// checks are the run's, named after it.
func TestFoldTenantsFromTheHostsDirectories(t *testing.T) {
	r := loadRecorded(t, filepath.Join("..", "report", "testdata", "tenants-fleet"))
	fold, err := FoldTenants(r.Path, *r.Run.Tenants, false)
	if err != nil {
		t.Fatal(err)
	}
	recorded := r.Workloads[0].Steps
	if len(fold.Steps) != len(recorded) || len(fold.Steps) != 1 {
		t.Fatalf("%d fleet steps, the run recorded %d", len(fold.Steps), len(recorded))
	}
	s := fold.Steps[0].Step
	if s.Name != recorded[0].Name || s.Users != recorded[0].Users || s.Fleet == nil || len(s.Fleet.Hosts) != 2 {
		t.Fatalf("step %+v, the run recorded %+v", s, recorded[0])
	}
	for _, name := range []results.FigureName{results.FigureTPM, results.FigureNOPM, results.FigureTPS} {
		got, _ := s.Figure(name)
		want, _ := recorded[0].Figure(name)
		sum := 0.0
		for _, h := range s.Fleet.Hosts {
			v, _ := h.Figure(name)
			sum += v
		}
		if got != want || got <= 0 || math.Abs(sum-got) > 1e-6*got {
			t.Errorf("%s: fleet %v, hosts' sum %v, the run recorded %v", name, got, sum, want)
		}
	}
	for i, h := range fold.Hosts {
		if h.Host != r.Run.Tenants.Hosts[i].Host || h.Status != results.StatusCompleted {
			t.Errorf("host %d: %s %s", i, h.Host, h.Status)
		}
	}
	if len(fold.Checks) == 0 || !strings.HasPrefix(fold.Checks[0].Name, "h1: ") {
		t.Errorf("checks %+v, want the hosts' named after them", fold.Checks)
	}
}

// What the fold cannot read fails it, naming the host: results that did not
// come back, a host directory reached through a link, and hosts whose
// steps differ.
func TestFoldTenantsRefuses(t *testing.T) {
	h2 := filepath.Join("hosts", "h2", "20261127-070604-tenants-h2")
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, dir string, ten *results.Tenants)
		want  string
	}{
		{"results not back", func(t *testing.T, dir string, ten *results.Tenants) { ten.Hosts[1].Dir = "" },
			"host h2: no results came back"},
		{"a link", func(t *testing.T, dir string, ten *results.Tenants) {
			moved := filepath.Join(dir, "elsewhere")
			if err := os.Rename(filepath.Join(dir, h2), moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, filepath.Join(dir, h2)); err != nil {
				t.Fatal(err)
			}
		}, "20261127-070604-tenants-h2 is a symbolic link"},
		{"other steps", func(t *testing.T, dir string, ten *results.Tenants) {
			editJSON(t, filepath.Join(dir, h2, "steps", "00-users-1", "summary.json"), func(s map[string]any) { s["name"] = "users-2" })
		}, "step 0 is users-1 on h1 and users-2 on h2: the hosts did not run the same steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "report", "testdata", "tenants-fleet"))); err != nil {
				t.Fatal(err)
			}
			r := loadRecorded(t, dir)
			ten := *r.Run.Tenants
			tc.spoil(t, dir, &ten)
			fold, err := FoldTenants(dir, ten, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), " h2") {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if len(fold.Steps) != 0 {
				t.Errorf("%d steps folded", len(fold.Steps))
			}
			if tc.name != "other steps" && fold.Hosts[1].Status != results.StatusFailed {
				t.Errorf("h2's status %s, want failed", fold.Hosts[1].Status)
			}
		})
	}
}
