package suite

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds suite files as a user may mistype them. Seeds are the
// suite files of testdata and of the examples, so `go test` runs them as
// ordinary tests. A file either fails with every problem located and
// explained, or gives a plan that the runner can execute as it is: runs
// numbered in order under distinct names, each with a known kind, a data
// target with a path, positive user counts and step lengths, and a dry run
// that prints.
func FuzzParse(f *testing.F) {
	var seeds []string
	for _, pattern := range []string{filepath.Join("testdata", "*.toml"), filepath.Join("..", "..", "examples", "*.toml")} {
		m, _ := filepath.Glob(pattern)
		seeds = append(seeds, m...)
	}
	if len(seeds) == 0 {
		f.Fatal("no suite files to seed from")
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plan, err := Parse("s.toml", data, testEnv(nil))
		if err != nil {
			if plan != nil {
				t.Fatalf("error %v with a plan", err)
			}
			var ps *Problems
			if errors.As(err, &ps) {
				if len(ps.Items) == 0 {
					t.Fatal("a Problems error without a problem")
				}
				for _, p := range ps.Items {
					if p.Key == "" && p.Line == 0 || p.Msg == "" {
						t.Errorf("problem %+v says neither where nor what", p)
					}
				}
			}
			return
		}
		if plan.Name == "" || plan.Results == "" || len(plan.Runs) == 0 || len(plan.Runs) > maxRuns {
			t.Fatalf("plan %q results %q with %d runs", plan.Name, plan.Results, len(plan.Runs))
		}
		names := map[string]bool{}
		for i, r := range plan.Runs {
			if r.Index != i {
				t.Errorf("run %d has index %d", i, r.Index)
			}
			if names[r.Name] {
				t.Errorf("two runs named %q", r.Name)
			}
			names[r.Name] = true
			if _, known := testEnv(nil).Workloads.Get(r.Kind); !known && r.Kind != "disk" || !scenarios[r.Scenario] {
				t.Errorf("run %q: kind %q scenario %q", r.Name, r.Kind, r.Scenario)
			}
			if strings.TrimSpace(r.Data.Path) == "" {
				t.Errorf("run %q has no data path", r.Name)
			}
			if r.Kind != "disk" && !contains(testEnv(nil).Engines, r.Engine) {
				t.Errorf("run %q: engine %q", r.Name, r.Engine)
			}
			for _, u := range r.Users {
				if u <= 0 || u > 100000 { // the bounds of --users
					t.Errorf("run %q: %d users", r.Name, u)
				}
			}
			if r.Kind != "disk" && len(r.Users) == 0 {
				t.Errorf("run %q: no user counts", r.Name)
			}
			if r.Step <= 0 || r.RampUp < 0 || r.BufferPool < 0 {
				t.Errorf("run %q: step %v, ramp-up %v, buffer pool %d", r.Name, r.Step, r.RampUp, r.BufferPool)
			}
			if r.Scenario == "backup" && r.Backups.Cycles < 1 || r.Scenario == "noisy-neighbour" && r.Noisy.Tenants < 1 {
				t.Errorf("run %q: scenario %q without cycles or tenants: %+v %+v", r.Name, r.Scenario, r.Backups, r.Noisy)
			}
		}
		if err := plan.DryRun(io.Discard, func(Run) Estimated { return Estimated{Typical: time.Minute, Ceiling: time.Minute, Space: 1 << 30} }); err != nil {
			t.Errorf("dry run: %v", err)
		}
	})
}
