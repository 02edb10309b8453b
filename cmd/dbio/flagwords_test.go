package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestFlagMistakesAnsweredInPlainWords: an unknown flag gets the flags it
// may have meant, another tool's word its dbio flag, and a value the flag
// cannot take an example of one it can; each is bad input, exit code 2.
func TestFlagMistakesAnsweredInPlainWords(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"typo", []string{"tpcc", "--warehous", "3"}, "unknown flag --warehous: did you mean --warehouses?"},
		{"begun", []string{"tpcc", "--ware", "3"}, "did you mean --warehouses?"},
		{"underscores", []string{"tpcc", "--ramp_time", "5s"}, "did you mean --ramp-time?"},
		{"old name's typo gives the new name", []string{"tpcc", "--rampp", "5s"}, "did you mean --ramp-time?"},
		{"another command's flag", []string{"tpcc", "--profile", "oltp"}, "--profile is a flag of dbio disk, not of dbio tpcc"},
		{"HammerDB's duration", []string{"tpcc", "--duration", "5"}, "--runtime is the measured time of each step"},
		{"sysbench's threads", []string{"sysbench", "--threads", "8"}, "--users is the sequence of user counts"},
		{"nothing close", []string{"tpcc", "--xyzzy"}, "unknown flag --xyzzy (see 'dbio tpcc --help')"},
		{"duration without unit", []string{"tpcc", "--runtime", "10"}, "--runtime 10: give a unit, e.g. 10s or 2m"},
		{"not a duration", []string{"tpcc", "--ramp-time", "soon"}, "--ramp-time soon: give a duration with its unit, e.g. 30s, 2m or 1h30m"},
		{"list for one rate", []string{"tpcc", "--rate", "100,200"}, "--rate 100,200: give one number, e.g. --rate 100 (one value, not a list)"},
		{"not a number", []string{"tpcc", "--rate", "fast"}, "--rate fast: give a number, e.g. 100 or 2.5"},
		{"not a whole number", []string{"disk", "--repeat", "2.5"}, "--repeat 2.5: give a whole number"},
		{"not a bool", []string{"tpcc", "--reuse=maybe"}, "--reuse=maybe: give true or false"},
		{"no value", []string{"tpcc", "--users"}, "--users needs a value, e.g. --users 1,2,3,5,8"},
		{"HammerDB's vu is --users", []string{"tpcc", "--target", dir, "--vu", "0"}, "--users:"},
		{"HammerDB's warehouse is --warehouses", []string{"tpcc", "--target", dir, "--warehouse", "0"}, "--warehouses 0: must be"},
		{"HammerDB's keyandthink is --keying-thinking", []string{"tpcc", "--target", dir, "--keyandthink", "--users", "2"}, "--users: with --keying-thinking"},
		{"a synonym and its flag at once", []string{"tpcc", "--target", dir, "--vu", "2", "--users", "3"}, "--users and --vu are one flag (--vu is HammerDB's name): give it once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			app := testApp(&stdout)
			app.Stderr = &stderr
			if code := run(context.Background(), app, tt.args); code != exitUsage {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr.String())
			}
			for _, raw := range []string{"strconv.", "missing unit in duration", "invalid argument"} {
				if strings.Contains(stderr.String(), raw) {
					t.Errorf("stderr has the parser's %q:\n%s", raw, stderr.String())
				}
			}
		})
	}
}
