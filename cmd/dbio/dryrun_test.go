package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkloadDryRunWritesNothing: --dry-run on a workload command (and
// quick, backup and noisy) prints the plan, its time, its space and what
// it would create, exits 0, and leaves the target and the results
// directory as they were.
func TestWorkloadDryRunWritesNothing(t *testing.T) {
	for _, tt := range []struct {
		workload string
		args     []string
		want     []string
	}{
		{"tpcc", []string{"--vu", "4", "--warehouse", "2"}, []string{"plan:    tpcc on sqlite, users 4: 30s ramp-up", "time:    about 2m34s\n", "load          3s    2 warehouses at 0.63 warehouses/s on sqlite", "ramp-ups      30s   1 × 30s", "measurements  2m0s  1 × 2m0s", "checks        1s    1 × 1s: 2 warehouses at 10 warehouses/s on sqlite"}},
		{"sysbench", []string{"--repeat", "2"}, []string{"plan:    sysbench on sqlite", "all of it 2 times (--repeat), counted in each part", "(a repeat set"}},
		{"as3ap", nil, []string{"plan:    as3ap on sqlite", ", fewer steps when the run stops early"}},
		{"quick", nil, []string{"plan:    fio four-corners on the data target, then tpcc on sqlite", "device pass   32s", "layout"}},
		{"backup", []string{"--cycles", "3", "--restore", "--interval", "1m"}, []string{"plan:    tpcc on sqlite: 3 backup and restore cycles", "backups  3m6s  3 backup and restore cycle(s) 1m0s apart", "more for a backup on ", "for the database on "}},
		{"noisy", []string{"--tenants", "3", "--backup-tenants", "1", "--cycles", "4", "--interval", "100s"}, []string{"plan:    tpcc on sqlite: 3 tenants", "load    6s", "4 backup(s) 1m40s apart)", "phases  8m0s", "for 3 databases on "}},
	} {
		t.Run(tt.workload, func(t *testing.T) {
			dir := t.TempDir()
			data, resultsBase := filepath.Join(dir, "data"), filepath.Join(dir, "results")
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			args := append([]string{tt.workload, "--target", data, "--results", resultsBase, "--dry-run"}, tt.args...)
			if code := run(context.Background(), testApp(&out), args); code != exitOK {
				t.Fatalf("exit %d, want 0:\n%s", code, out.String())
			}
			want := append(tt.want, "space:   about", " on "+data, "creates: "+filepath.Join(data, "dbio"), "creates: "+resultsBase+"/")
			for _, w := range want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if entries, err := os.ReadDir(data); err != nil || len(entries) > 0 {
				t.Errorf("the target holds %v (%v) after a dry run", entries, err)
			}
			if _, err := os.Stat(resultsBase); !os.IsNotExist(err) {
				t.Errorf("the results directory exists after a dry run (%v)", err)
			}
		})
	}
}
