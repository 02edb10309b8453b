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
		{"tpcc", []string{"--vu", "4", "--warehouse", "2"}, []string{"plan:    tpcc on sqlite, users 4: 30s ramp-up", "time:    about 3m10s: loading about 40s, then 1 step(s) of 30s ramp-up and 2m0s measured"}},
		{"sysbench", []string{"--repeat", "2"}, []string{"plan:    sysbench on sqlite", "all of it 2 times (--repeat)", "(a repeat set"}},
		{"as3ap", nil, []string{"plan:    as3ap on sqlite", "time:    at most about"}},
		{"quick", nil, []string{"plan:    fio four-corners on the data target, then tpcc on sqlite", ": the device pass about "}},
		{"backup", []string{"--cycles", "3", "--restore", "--interval", "1m"}, []string{"plan:    tpcc on sqlite: 3 backup and restore cycles", "then 3 backup and restore cycle(s), each about", "more for a backup on ", "for the database on "}},
		{"noisy", []string{"--tenants", "3", "--backup-tenants", "1", "--cycles", "4", "--interval", "100s"}, []string{"plan:    tpcc on sqlite: 3 tenants", "loading 3 tenants' databases", "(4 backup(s) 1m40s apart", "for 3 databases on "}},
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
