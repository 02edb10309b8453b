package workload

import (
	"testing"
	"time"
)

// titled is a definition with only a name and a title.
func titled(name, title string) Definition { return Definition{Name: name, Title: title} }

func TestRegistry(t *testing.T) {
	r := NewRegistry(titled("tpcc", "TPC-C"), titled("as3ap", "AS3AP"))
	tests := []struct {
		kind, title string
		known       bool
	}{
		{"tpcc", "TPC-C", true},
		{"as3ap", "AS3AP", true},
		{"disk", "disk", false},
		{"quick", "quick", false},
	}
	for _, tt := range tests {
		if got := r.Title(tt.kind); got != tt.title {
			t.Errorf("Title(%q) = %q, want %q", tt.kind, got, tt.title)
		}
		if _, ok := r.Lookup(tt.kind); ok != tt.known {
			t.Errorf("Lookup(%q) found %v, want %v", tt.kind, ok, tt.known)
		}
	}
	if got := r.Names(); len(got) != 2 || got[0] != "tpcc" || got[1] != "as3ap" {
		t.Errorf("Names() = %v, want the order given", got)
	}
}

func TestRegistryRefusesTwoDefinitionsOfOneName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second tpcc was accepted")
		}
	}()
	NewRegistry(titled("tpcc", "TPC-C"), titled("tpcc", "again"))
}

func TestSettingErrorForms(t *testing.T) {
	tests := []struct {
		err                  *SettingError
		flagForm, key, table string
	}{
		{Invalid("warehouses", 0, "must be at least %d", 1), "--warehouses 0: must be at least 1", "warehouses", "0: must be at least 1"},
		{Invalid("rand-type", "zipf", "use uniform"), `--rand-type "zipf": use uniform`, "rand_type", `"zipf": use uniform`},
		{Invalid("ceiling", time.Duration(0), "use a positive time"), "--ceiling 0s: use a positive time", "ceiling", "0s: use a positive time"},
		// The other settings a message names take the form of the place
		// the setting was given in.
		{Invalid("terminals", 50, "lower it, raise --warehouses to 5, or allow it with --terminals-over-spec"),
			"--terminals 50: lower it, raise --warehouses to 5, or allow it with --terminals-over-spec", "terminals",
			"50: lower it, raise warehouses to 5, or allow it with terminals_over_spec"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.flagForm {
			t.Errorf("Error() = %q, want %q", got, tt.flagForm)
		}
		if got := tt.err.Key(); got != tt.key {
			t.Errorf("Key() = %q, want %q", got, tt.key)
		}
		if got := tt.err.InTable(); got != tt.table {
			t.Errorf("InTable() = %q, want %q", got, tt.table)
		}
	}
}

func TestDurationReadsSuiteText(t *testing.T) {
	tests := []struct {
		text string
		want time.Duration
		ok   bool
	}{
		{"100ms", 100 * time.Millisecond, true},
		{"2m", 2 * time.Minute, true},
		{"fast", 0, false},
	}
	for _, tt := range tests {
		var d Duration
		err := d.UnmarshalText([]byte(tt.text))
		if (err == nil) != tt.ok || time.Duration(d) != tt.want {
			t.Errorf("%q: %v, %v; want %v, ok %v", tt.text, time.Duration(d), err, tt.want, tt.ok)
		}
	}
}
