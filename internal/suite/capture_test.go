package suite

import (
	"errors"
	"strings"
	"testing"
)

// A run's capture key records its user steps' block I/O, as --capture
// does; it reaches the run, and is refused where there are no user steps
// of a database to capture.
func TestCaptureKey(t *testing.T) {
	const file = `name = "x"
[targets.a]
path = "/x"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "tpcc"
warehouses = 1
[workloads.d]
kind = "disk"
profile = "quick"
[[runs]]
data = "a"
capture = true
%RUN%
`
	parse := func(run string) (*Plan, error) {
		return Parse("s.toml", []byte(strings.Replace(file, "%RUN%", run, 1)), testEnv(nil))
	}
	p, err := parse("workload = \"w\"\nengine = \"e\"")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Runs[0].Capture {
		t.Errorf("run %+v does not capture", p.Runs[0])
	}
	for _, tt := range []struct{ run, says string }{
		{`workload = "d"`, "runs[0].capture: captures the block I/O a database's user steps send"},
		{"workload = \"w\"\nengine = \"e\"\nscenario = \"backup\"\n[runs.backups]\ncycles = 1", "runs[0].capture: records a run's user steps, and the backup scenario"},
	} {
		_, err := parse(tt.run)
		var ps *Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.says) {
			t.Errorf("%s: %v, want a problem saying %q", tt.run, err, tt.says)
		}
	}
}
