package suite

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A workload table's ramp_until ends its runs' ramp-ups at steady state:
// it reaches every run of the workload with its window, and the keys are
// checked where they are written.
func TestRampUpUntilKeys(t *testing.T) {
	const file = `name = "x"
[targets.a]
path = "/x"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "tpcc"
warehouses = 1
ramp_time = "5m"
%KEYS%
[[runs]]
workload = "w"
engine = "e"
data = "a"
%RUN%
`
	parse := func(keys, run string) (*Plan, error) {
		f := strings.Replace(strings.Replace(file, "%KEYS%", keys, 1), "%RUN%", run, 1)
		return Parse("s.toml", []byte(f), testEnv(nil))
	}
	p, err := parse("ramp_until = \"nopm_slope:0.5%\"\nsteady_ramp = \"10s\"", "")
	if err != nil {
		t.Fatal(err)
	}
	r := p.Runs[0]
	if r.RampUpUntil != "nopm_slope:0.5%" || r.SteadyWindow != DefaultSteadyWindow || r.SteadyRamp != 10*time.Second || r.RampUp != 5*time.Minute {
		t.Errorf("run %+v", r)
	}
	if p, err := parse("", ""); err != nil || p.Runs[0].RampUpUntil != "" || p.Runs[0].SteadyWindow != 0 {
		t.Errorf("without ramp_until: %v, %+v", err, p)
	}
	tests := []struct{ keys, run, says string }{
		{`ramp_until = "lat:1%"`, "", `line 10: workloads.w.ramp_until: malformed steady-state criterion "lat:1%": unknown metric "lat"`},
		{`ramp_until = "iops:10%"`, "", "iops and bw are fio's series"},
		{"ramp_until = \"tps:10%\"\nsteady_window = \"2s\"", "", `line 11: workloads.w.steady_window: "2s": use whole seconds, at least 3s`},
		{"ramp_until = \"tps:10%\"\nsteady_ramp = \"1.5s\"", "", `workloads.w.steady_ramp: "1.5s": use whole seconds`},
		{`steady_window = "30s"`, "", "workloads.w.steady_window: applies only with ramp_until"},
		{`ramp_until = "tps:10%"`, `scenario = "backup"` + "\n[runs.backups]\ncycles = 1", "the backup scenario has phases of its own"},
	}
	for _, tt := range tests {
		_, err := parse(tt.keys, tt.run)
		var ps *Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.says) {
			t.Errorf("%s: %v, want a problem saying %q", tt.keys, err, tt.says)
		}
	}
}
