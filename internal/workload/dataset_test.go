package workload

import (
	"errors"
	"reflect"
	"testing"
)

// CheckReuse compares every part of a recorded identity with the run's,
// and its refusal names each difference, both values and the fix.
func TestCheckReuse(t *testing.T) {
	want := NewDataset("sysbench", 2, 42, [2]string{"tables", "4"}, [2]string{"table-size", "10000"})
	recorded := func(edit func(map[string]string)) map[string]string {
		m := map[string]string{}
		for _, kv := range DatasetRecord(want) {
			m[kv[0]] = kv[1]
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		record map[string]string
		diffs  []DatasetDifference
		msg    string // the whole message; empty when kept
	}{
		{name: "same identity kept", record: recorded(nil)},
		{name: "other keys of the record do not matter", record: recorded(func(m map[string]string) { m["complete"] = "1" })},
		{name: "another seed", record: recorded(func(m map[string]string) { m["seed"] = "7" }),
			diffs: []DatasetDifference{{Name: "seed", Flag: true, Found: "7", Wanted: "42"}},
			msg:   "--reuse: the sysbench data in this database is not what this run would load (seed 7 there, 42 for this run): load afresh without --reuse, or run with --seed 7"},
		{name: "another scale and seed", record: recorded(func(m map[string]string) { m["table_size"], m["seed"] = "500", "7" }),
			diffs: []DatasetDifference{{Name: "table-size", Flag: true, Found: "500", Wanted: "10000"}, {Name: "seed", Flag: true, Found: "7", Wanted: "42"}},
			msg:   "--reuse: the sysbench data in this database is not what this run would load (table-size 500 there, 10000 for this run; seed 7 there, 42 for this run): load afresh without --reuse, or run with --table-size 500 --seed 7"},
		{name: "another loader version has no flag to fix it", record: recorded(func(m map[string]string) { m["loader_version"], m["seed"] = "1", "7" }),
			diffs: []DatasetDifference{{Name: "loader version", Found: "1", Wanted: "2"}, {Name: "seed", Flag: true, Found: "7", Wanted: "42"}},
			msg:   "--reuse: the sysbench data in this database is not what this run would load (loader version 1 there, 2 for this run; seed 7 there, 42 for this run): load afresh without --reuse"},
		{name: "another workload", record: recorded(func(m map[string]string) { m["workload"] = "tpcc" }),
			diffs: []DatasetDifference{{Name: "workload", Found: "tpcc", Wanted: "sysbench"}},
			msg:   "--reuse: the sysbench data in this database is not what this run would load (workload tpcc there, sysbench for this run): load afresh without --reuse"},
		{name: "a setting the record lacks", record: recorded(func(m map[string]string) { delete(m, "tables") }),
			diffs: []DatasetDifference{{Name: "tables", Flag: true, Wanted: "4"}},
			msg:   "--reuse: the sysbench data in this database is not what this run would load (tables not recorded there, 4 for this run): load afresh without --reuse"},
		{name: "an older dbio's record", record: map[string]string{"tables": "4", "table_size": "10000", "seed": "42"},
			msg: "--reuse: the sysbench data in this database was loaded by an older dbio, which did not record its loader version, so nothing says it is the data this run would load: load afresh without --reuse"},
		{name: "an older dbio's record without the seed", record: map[string]string{"tables": "4", "table_size": "10000", "complete": "1"},
			msg: "--reuse: the sysbench data in this database was loaded by an older dbio, which did not record its loader version or seed, so nothing says it is the data this run would load: load afresh without --reuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReuse(tc.record, want)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var refused *ReuseRefused
			if !errors.As(err, &refused) {
				t.Fatalf("got %v, want a *ReuseRefused", err)
			}
			if !reflect.DeepEqual(refused.Differences, tc.diffs) {
				t.Errorf("differences %+v, want %+v", refused.Differences, tc.diffs)
			}
			if err.Error() != tc.msg {
				t.Errorf("message\n%s\nwant\n%s", err, tc.msg)
			}
		})
	}
}

// The record holds the identity under the keys a suite table would use,
// settings in the workload's order.
func TestDatasetRecord(t *testing.T) {
	got := DatasetRecord(NewDataset("tpcc", 1, 7, [2]string{"warehouses", "2"}, [2]string{"rand-type", "uniform"}))
	want := [][2]string{{"workload", "tpcc"}, {"loader_version", "1"}, {"seed", "7"}, {"warehouses", "2"}, {"rand_type", "uniform"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("record %v, want %v", got, want)
	}
}
