package workload

import (
	"github.com/spf13/pflag"

	"dbio/internal/results"
)

// Loading is what every workload that builds its own data takes from the
// user about that data, embedded in its Config: the seed both the data and
// the transaction inputs are drawn from, how many parts load at once, and
// what a run does with data loaded before it. Embedded, its fields stand
// in the workload's run.json record and suite table as the workload's own.
type Loading struct {
	// Seed makes data and transaction inputs reproducible.
	Seed uint64 `json:"seed" toml:"seed"`
	// LoadWorkers is how many parts (tables, relations, warehouses) load
	// at once; 0 lets the engine's backend choose.
	LoadWorkers int `json:"load_workers" toml:"load_workers"`
	// Reuse keeps data dbio loaded before with the same identity (see
	// CheckReuse) instead of rebuilding it: --reuse, the older spelling
	// of --data reuse, which Build sets from Data.
	Reuse bool `json:"reuse" toml:"-"`
	// Data is what a run does with data loaded before it (--data, a
	// suite's data key); empty is fresh, or reuse with --reuse.
	Data DataPolicy `json:"data,omitempty" toml:"data"`
}

// DataPolicy is what a run does with the data earlier runs loaded.
type DataPolicy string

const (
	// DataFresh loads the data again for every run.
	DataFresh DataPolicy = "fresh"
	// DataReset loads it once, keeps a pristine copy of the loaded
	// database in dbio's directory, and restores that copy before every
	// later run with the same data, instead of loading again.
	DataReset DataPolicy = "reset"
	// DataReuse keeps the data as earlier runs left it, their changes
	// included (--reuse).
	DataReuse DataPolicy = "reuse"
)

// dataPolicies are the values --data takes, in the order help lists them.
var dataPolicies = []DataPolicy{DataFresh, DataReset, DataReuse}

// LoadingHelp is how a workload's command describes the Loading flags, in
// its own words.
type LoadingHelp struct {
	Seed, LoadWorkers, Reuse string
}

// dataHelp is --data's help, the same for every workload.
const dataHelp = "what the run does with data loaded before: fresh (load it again), reset (load it once, keep a pristine copy in dbio's directory on the target and restore that before each later run, repeat and suite run instead of loading again), reuse (keep it as earlier runs left it, their changes included; --reuse says the same)"

// BindFlags adds --seed, --load-workers, --data and --reuse.
func (l *Loading) BindFlags(fs *pflag.FlagSet, help LoadingHelp) {
	fs.Uint64Var(&l.Seed, "seed", l.Seed, help.Seed)
	fs.IntVar(&l.LoadWorkers, "load-workers", l.LoadWorkers, help.LoadWorkers)
	fs.StringVar((*string)(&l.Data), "data", string(l.Data), dataHelp)
	fs.BoolVar(&l.Reuse, "reuse", l.Reuse, help.Reuse)
}

// LoadingSettings implements Settings for the workload whose Config embeds l.
func (l *Loading) LoadingSettings() *Loading { return l }

// Policy is the run's data policy: Data, or reuse with --reuse, or fresh.
func (l Loading) Policy() DataPolicy {
	switch {
	case l.Data != "":
		return l.Data
	case l.Reuse:
		return DataReuse
	}
	return DataFresh
}

// Validate reports a negative --load-workers, a --data dbio does not know,
// and --reuse beside a --data that says otherwise.
func (l Loading) Validate() []error {
	var errs []error
	if l.LoadWorkers < 0 {
		errs = append(errs, Invalid("load-workers", l.LoadWorkers, "must be 0 (automatic) or more"))
	}
	known := false
	for _, p := range dataPolicies {
		known = known || l.Data == p
	}
	switch {
	case l.Data != "" && !known:
		errs = append(errs, Invalid("data", l.Data, "must be fresh, reset or reuse"))
	case l.Reuse && l.Data != "" && l.Data != DataReuse:
		errs = append(errs, Invalid("data", l.Data, "contradicts --reuse, which is --data reuse: drop one of them"))
	}
	return errs
}

// settle makes Data and Reuse say the same policy, as run.json records it.
func (l *Loading) settle() {
	l.Data = l.Policy()
	l.Reuse = l.Data == DataReuse
}

// DataKept is implemented by the workloads whose data a run may load
// afresh, reset from a pristine copy or reuse: their Loading, and the
// identity of the data they load, known before anything is loaded.
type DataKept interface {
	LoadingSettings() *Loading
	Dataset() results.Dataset
}
