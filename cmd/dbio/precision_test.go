package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --precision on the workload commands: a bad bound, a minimum it cannot
// keep and a figure the workload does not record exit 2 naming the flag
// and the fix, before anything is written; a sound one shows in the dry
// run's plan, the measurement's time then a ceiling and a typical length
// (here the ceiling: a 2 % bound on TPC-C's usual variation takes longer).
func TestPrecisionFlag(t *testing.T) {
	for _, tt := range []struct {
		workload string
		args     []string
		code     int
		says     []string
	}{
		{"tpcc", []string{"--precision", "2"}, exitUsage, []string{`--precision: malformed precision "2": "2" is not a percentage`, "e.g. new_order:p99:10%"}},
		{"sysbench", []string{"--precision-min", "20s"}, exitUsage, []string{"--precision-min: applies only with --precision"}},
		{"tpcc", []string{"--precision", "2%", "--precision-min", "3m", "--runtime", "1m"}, exitUsage, []string{"--precision-min 3m0s is longer than --runtime 1m0s"}},
		{"tpcc", []string{"--precision", "2%", "--precision-min", "5s"}, exitUsage, []string{"--precision-min 5s: use whole seconds, at least 10s"}},
		{"tpcc", []string{"--precision", "new_order:p99:10%,slow_order:p99:10%"}, exitUsage, []string{`tpcc has no transaction type "slow_order"; use one of new_order, payment`}},
		{"sysbench", []string{"--precision", "nopm:2%"}, exitUsage, []string{"sysbench records no per-second nopm; use one of qps"}},
		{"tpcc", []string{"--precision", "2%", "--rate", "100", "--goal", "p99<=50ms"}, exitUsage, []string{"--precision: a goal search's probes"}},
		{"tpcc", []string{"--precision", "nopm:2%,new_order:p99:10%", "--vu", "4"}, exitOK, []string{"a measurement until precise (nopm ±2%, new_order:p99 ±10% at 95 % confidence, at least 30s) or for 2m0s at most", "measurements  2m0s  1 × until precise, 2m0s at most; typically 2m0s"}},
		{"as3ap", []string{"--precision", "3%", "--precision-min", "20s"}, exitOK, []string{"(headline throughput ±3% at 95 % confidence, at least 20s)"}},
	} {
		t.Run(tt.workload+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			data, resultsBase := filepath.Join(dir, "data"), filepath.Join(dir, "results")
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			args := append([]string{tt.workload, "--target", data, "--results", resultsBase, "--dry-run"}, tt.args...)
			if code := run(context.Background(), testApp(&out), args); code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tt.code, out.String())
			}
			for _, w := range tt.says {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if entries, err := os.ReadDir(data); err != nil || len(entries) > 0 {
				t.Errorf("the target holds %v (%v)", entries, err)
			}
		})
	}
}
