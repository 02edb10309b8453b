package tpcc

import (
	"database/sql"
	"database/sql/driver"
	"testing"
)

// TestAssign stores the values SQLite's driver returns in the destinations
// the transactions read into, as sql.Row.Scan did before.
func TestAssign(t *testing.T) {
	var s string
	var f float64
	var i int
	var a any
	var ni sql.NullInt64
	var nf sql.NullFloat64
	for _, tc := range []struct {
		name  string
		dest  any
		v     driver.Value
		check func() bool
		bad   bool
	}{
		{name: "text", dest: &s, v: "BC", check: func() bool { return s == "BC" }},
		{name: "bytes as text", dest: &s, v: []byte("GC"), check: func() bool { return s == "GC" }},
		{name: "NUMERIC stored as an integer", dest: &f, v: int64(3), check: func() bool { return f == 3 }},
		{name: "real", dest: &f, v: 0.25, check: func() bool { return f == 0.25 }},
		{name: "numeric text", dest: &f, v: "1.5", check: func() bool { return f == 1.5 }},
		{name: "integer", dest: &i, v: int64(42), check: func() bool { return i == 42 }},
		{name: "whole real into an integer", dest: &i, v: 7.0, check: func() bool { return i == 7 }},
		{name: "fraction into an integer", dest: &i, v: 7.5, bad: true},
		{name: "anything", dest: &a, v: int64(9), check: func() bool { return a == int64(9) }},
		{name: "NULL carrier", dest: &ni, v: nil, check: func() bool { return !ni.Valid }},
		{name: "carrier", dest: &ni, v: int64(4), check: func() bool { return ni.Valid && ni.Int64 == 4 }},
		{name: "NULL sum", dest: &nf, v: nil, check: func() bool { return !nf.Valid }},
		{name: "text into an integer", dest: &i, v: "x", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := assign(tc.dest, tc.v)
			if (err != nil) != tc.bad {
				t.Fatalf("assign(%T, %#v): %v; want an error: %v", tc.dest, tc.v, err, tc.bad)
			}
			if !tc.bad && !tc.check() {
				t.Errorf("assign(%T, %#v) stored the wrong value", tc.dest, tc.v)
			}
		})
	}
}
