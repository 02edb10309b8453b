package workload

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
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
		if _, ok := r.Get(tt.kind); ok != tt.known {
			t.Errorf("Get(%q) found %v, want %v", tt.kind, ok, tt.known)
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

// loadingOnly is a workload's settings with no setting of its own but its
// data's.
type loadingOnly struct {
	Loading
	GivenUsers
}

func (s *loadingOnly) BindFlags(fs *pflag.FlagSet) {}
func (s *loadingOnly) Table() any                  { return s }
func (s *loadingOnly) Validate() []error           { return s.Loading.Validate() }
func (s *loadingOnly) Estimate(string) Estimate    { return Estimate{} }
func (s *loadingOnly) Build(o BuildOptions) (Built, error) {
	return Built{Users: o.Users, Recorded: s.Loading}, nil
}

// TestEveryWorkloadHasItsLoadingFlags: a definition binds the Loading
// flags beside a workload's own, in its words, and a build keeps or
// reloads the data and draws from the seed they set.
func TestEveryWorkloadHasItsLoadingFlags(t *testing.T) {
	def := Definition{Name: "w", Loading: LoadingHelp{Seed: "seed help", LoadWorkers: "workers help", Reuse: "reuse help"}}
	s := &loadingOnly{}
	fs := pflag.NewFlagSet("w", pflag.ContinueOnError)
	def.BindFlags(s, fs)
	for name, help := range map[string]string{"seed": "seed help", "load-workers": "workers help", "reuse": "reuse help"} {
		if f := fs.Lookup(name); f == nil || f.Usage != help {
			t.Errorf("--%s: %+v, want it with help %q", name, f, help)
		}
	}
	if err := fs.Parse([]string{"--seed", "9", "--reuse"}); err != nil {
		t.Fatal(err)
	}
	b, err := Build(s, BuildOptions{Users: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Seed != 9 || !b.Reuse || len(b.Users) != 1 {
		t.Errorf("built with seed %d, reuse %v, users %v; want seed 9, reuse, users [2]", b.Seed, b.Reuse, b.Users)
	}
}
