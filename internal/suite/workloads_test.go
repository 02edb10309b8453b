package suite

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"dbio/internal/workload/as3ap"
)

// TestWorkloadTablesDecodeIntoTheirDefinition: a [workloads.x] table's own
// keys are the registered definition's settings, refused and validated at
// their line like every other key.
func TestWorkloadTablesDecodeIntoTheirDefinition(t *testing.T) {
	const head = "name = \"x\"\n[targets.a]\npath = \"/x\"\n[engines.e]\nengine = \"sqlite\"\n[[runs]]\nworkload = \"w\"\nengine = \"e\"\ndata = \"a\"\n[workloads.w]\n"
	// The workload table's keys start on line 11.
	tests := []struct {
		name    string
		table   string
		problem string // the problem reported, when the table is bad
		users   []int  // else the run's users
		label   string // and how a dry run shows them
	}{
		{"tpcc", "kind = \"tpcc\"\nwarehouses = 2\n", "", []int{1, 2, 4, 8}, "1,2,4,8"},
		{"as3ap steps", "kind = \"as3ap\"\nrows = 2000\nstart = 2\nadd = 3\nmax_users = 11\n", "", []int{2, 5, 8, 11}, "2+3..11"},
		{"paced terminals", "kind = \"tpcc\"\nwarehouses = 3\nkeying_thinking = true\npool = 4\n", "", []int{30}, "30 terminals"},
		{"terminals with users", "kind = \"tpcc\"\nwarehouses = 3\nkeying_thinking = true\nusers = [1, 2]\n",
			"workloads.w.users: with keying_thinking TPC-C runs one step of terminals: set them with terminals (default ten per warehouse)", nil, ""},
		{"an empty pool", "kind = \"tpcc\"\nwarehouses = 3\nkeying_thinking = true\npool = 0\n", "line 14: workloads.w.pool: 0: the terminals need at least 1 connection", nil, ""},
		{"misspelt key", "kind = \"tpcc\"\nwarehouse = 2\n", "line 12: workloads.w.warehouse: unknown key (did you mean warehouses?)", nil, ""},
		{"another kind's key", "kind = \"disk\"\nprofile = \"four-corners\"\nwarehouses = 1\n", "line 13: workloads.w.warehouses: unknown key", nil, ""},
		{"wrong type", "kind = \"sysbench\"\ntables = \"many\"\n", "line 12: workloads.w.tables:", nil, ""},
		{"bad setting", "kind = \"sysbench\"\nworkload = \"oltp_bogus\"\n", `line 12: workloads.w.workload: "oltp_bogus": use one of`, nil, ""},
		{"bad duration", "kind = \"as3ap\"\nceiling = \"fast\"\n", "line 12: workloads.w.ceiling:", nil, ""},
		{"bad stepping", "kind = \"as3ap\"\nstart = 5\nmax_users = 2\n", "line 13: workloads.w.max_users: 2: use a count from start (5) to 100000", nil, ""},
		// The other settings a message names are named as keys, not flags.
		{"terminals over the specification", "kind = \"tpcc\"\nwarehouses = 2\nkeying_thinking = true\nterminals = 50\n",
			"workloads.w.terminals: 50: more than the specification's 10 per warehouse (2 warehouses x 10 = 20): lower it, raise warehouses to 5, or allow it with terminals_over_spec", nil, ""},
		{"unknown kind", "kind = \"tpch\"\n", `line 11: workloads.w.kind: unknown kind "tpch": use tpcc, sysbench, as3ap, disk or replay`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("s.toml", []byte(head+tt.table), testEnv(nil))
			if tt.problem != "" {
				var ps *Problems
				if !errors.As(err, &ps) || !strings.Contains(ps.Error(), tt.problem) {
					t.Fatalf("error %v, want %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := p.Runs[0]
			if !slices.Equal(r.Users, tt.users) {
				t.Errorf("users %v, want %v", r.Users, tt.users)
			}
			if _, label := r.Workload.Settings.Steps(r.Users); label != tt.label {
				t.Errorf("label %q, want %q", label, tt.label)
			}
		})
	}
}

// TestSuiteSettingsAreTheFlagsSettings: a suite table and the command's
// defaults make the same typed settings, so a key left out means what the
// flag left out means.
func TestSuiteSettingsAreTheFlagsSettings(t *testing.T) {
	const file = "name = \"x\"\n[targets.a]\npath = \"/x\"\n[engines.e]\nengine = \"sqlite\"\n[[runs]]\nworkload = \"w\"\nengine = \"e\"\ndata = \"a\"\n[workloads.w]\nkind = \"as3ap\"\nrows = 100000\n"
	p, err := Parse("s.toml", []byte(file), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := p.Runs[0].Workload.Settings.(*as3ap.Settings)
	want := as3ap.Definition().New()
	if !ok || *got != *want.(*as3ap.Settings) {
		t.Errorf("settings %+v, want the command's defaults %+v", got, want)
	}
}
