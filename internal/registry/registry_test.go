package registry

import (
	"reflect"
	"testing"
)

func TestLookupAndGet(t *testing.T) {
	r := New[int]("engine")
	r.Add("sqlite", 1)
	r.Add("postgres", 2)
	r.Add("mariadb", 3)
	tests := []struct {
		name       string
		lookup     int
		lookupErr  string
		get        int
		foundByGet bool
	}{
		{"postgres", 2, "", 2, true},
		{"PostgreSQL", 0, `unknown engine "PostgreSQL": use one of sqlite, postgres, mariadb`, 0, false},
		{"Postgres", 2, "", 0, false},
		{" mariadb\n", 3, "", 0, false},
		{"oracle", 0, `unknown engine "oracle": use one of sqlite, postgres, mariadb`, 0, false},
		{"", 0, `unknown engine "": use one of sqlite, postgres, mariadb`, 0, false},
	}
	for _, tt := range tests {
		v, err := r.Lookup(tt.name)
		switch {
		case tt.lookupErr == "" && (err != nil || v != tt.lookup):
			t.Errorf("Lookup(%q) = %d, %v; want %d", tt.name, v, err, tt.lookup)
		case tt.lookupErr != "" && (err == nil || err.Error() != tt.lookupErr):
			t.Errorf("Lookup(%q) error %v, want %s", tt.name, err, tt.lookupErr)
		}
		if v, ok := r.Get(tt.name); v != tt.get || ok != tt.foundByGet {
			t.Errorf("Get(%q) = %d, %v; want %d, %v", tt.name, v, ok, tt.get, tt.foundByGet)
		}
	}
	if got, want := r.Names(), []string{"sqlite", "postgres", "mariadb"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want the order registered, %v", got, want)
	}
	if got, want := r.All(), []int{1, 2, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("All() = %v, want %v", got, want)
	}
	names := r.Names()
	names[0] = "changed"
	if r.Names()[0] != "sqlite" {
		t.Error("changing the slice Names returned changed the registry")
	}
}

func TestAddRefuses(t *testing.T) {
	tests := []struct {
		name   string
		second string
	}{
		{"a name registered twice", "tpcc"},
		{"upper case, which Lookup never finds", "TPCC"},
		{"surrounding space, which Lookup never finds", "tpcc2 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New[string]("workload")
			r.Add("tpcc", "TPC-C")
			defer func() {
				if recover() == nil {
					t.Errorf("Add(%q) did not panic", tt.second)
				}
			}()
			r.Add(tt.second, "again")
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"usres", "users", 2}, {"warehuses", "warehouses", 1}, {"", "abc", 3}, {"seed", "seed", 0}} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"users", "warehouses", "work_mem", "Shared_Buffers"}
	tests := []struct {
		name   string
		within int
		want   string
	}{
		{"usres", 2, " (did you mean users?)"},
		{"usres", 1, ""},
		{"WAREHUSES", 2, " (did you mean warehouses?)"},
		{"shared_bufers", 2, " (did you mean Shared_Buffers?)"},
		{"wrok_mem", 2, " (did you mean work_mem?)"},
		{"zzz", 2, ""},
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.name, known, tt.within); got != tt.want {
			t.Errorf("DidYouMean(%q, within %d) = %q, want %q", tt.name, tt.within, got, tt.want)
		}
	}
}
