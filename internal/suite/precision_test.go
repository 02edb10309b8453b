package suite

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A workload table's precision ends its runs' measurements once their
// figures are precise: it reaches every run of the workload with its
// minimum, and the keys are checked where they are written.
func TestPrecisionKeys(t *testing.T) {
	const file = `name = "x"
[targets.a]
path = "/x"
[engines.e]
engine = "sqlite"
[workloads.w]
kind = "tpcc"
warehouses = 1
runtime = "5m"
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
	p, err := parse(`precision = "nopm:2%,new_order:p99:10%"`, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Runs[0]; r.Precision != "nopm:2%,new_order:p99:10%" || r.PrecisionMin != DefaultPrecisionMin || r.Step != 5*time.Minute {
		t.Errorf("run %+v", r)
	}
	if p, err := parse("precision = \"2%\"\nprecision_min = \"1m\"", ""); err != nil || p.Runs[0].PrecisionMin != time.Minute {
		t.Errorf("with precision_min: %v, %+v", err, p)
	}
	if p, err := parse("", ""); err != nil || p.Runs[0].Precision != "" || p.Runs[0].PrecisionMin != 0 {
		t.Errorf("without precision: %v, %+v", err, p)
	}
	tests := []struct{ keys, run, says string }{
		{`precision = "2"`, "", `line 10: workloads.w.precision: malformed precision "2": "2" is not a percentage`},
		{"precision = \"2%\"\nprecision_min = \"5s\"", "", `line 11: workloads.w.precision_min: "5s": use whole seconds, at least 10s`},
		{"precision = \"2%\"\nprecision_min = \"10m\"", "", "workloads.w.precision_min: 10m0s is longer than runtime (5m0s)"},
		{`precision_min = "30s"`, "", "workloads.w.precision_min: applies only with precision"},
		{`precision = "2%"`, `scenario = "backup"` + "\n[runs.backups]\ncycles = 1", "precision (workloads.w) ends the measurements of user steps"},
	}
	for _, tt := range tests {
		_, err := parse(tt.keys, tt.run)
		var ps *Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.says) {
			t.Errorf("%s: %v, want a problem saying %q", tt.keys, err, tt.says)
		}
	}
}

// A disk workload's precision bounds each of its fio points: the form and
// the minimum are checked here, the figures a point records by fio.
func TestDiskPrecisionKeys(t *testing.T) {
	const file = `name = "x"
[targets.a]
path = "/x"
[workloads.d]
kind = "disk"
profile = "job"
%KEYS%
[[runs]]
workload = "d"
data = "a"
`
	parse := func(keys string) (*Plan, error) {
		return Parse("s.toml", []byte(strings.Replace(file, "%KEYS%", keys, 1)), testEnv(nil))
	}
	p, err := parse("precision = \"iops:2%,p99:10%\"\nprecision_min = \"20s\"")
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Runs[0]; r.Precision != "iops:2%,p99:10%" || r.PrecisionMin != 20*time.Second {
		t.Errorf("run %+v", r)
	}
	for _, tt := range []struct{ keys, says string }{
		{`precision = "2"`, `workloads.d.precision: malformed precision "2"`},
		{"precision = \"2%\"\nprecision_min = \"5s\"", `workloads.d.precision_min: "5s": use whole seconds, at least 10s`},
	} {
		_, err := parse(tt.keys)
		var ps *Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.says) {
			t.Errorf("%s: %v, want a problem saying %q", tt.keys, err, tt.says)
		}
	}
}
