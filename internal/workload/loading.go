package workload

import "github.com/spf13/pflag"

// Loading is what every workload that builds its own data takes from the
// user about that data, embedded in its Config: the seed both the data and
// the transaction inputs are drawn from, how many parts load at once, and
// whether data dbio loaded before is kept. Embedded, its fields stand in
// the workload's run.json record and suite table as the workload's own.
type Loading struct {
	// Seed makes data and transaction inputs reproducible.
	Seed uint64 `json:"seed" toml:"seed"`
	// LoadWorkers is how many parts (tables, relations, warehouses) load
	// at once; 0 lets the engine's backend choose.
	LoadWorkers int `json:"load_workers" toml:"load_workers"`
	// Reuse keeps data dbio loaded before with the same identity (see
	// CheckReuse) instead of rebuilding it.
	Reuse bool `json:"reuse" toml:"-"`
}

// LoadingHelp is how a workload's command describes the Loading flags, in
// its own words.
type LoadingHelp struct {
	Seed, LoadWorkers, Reuse string
}

// BindFlags adds --seed, --load-workers and --reuse.
func (l *Loading) BindFlags(fs *pflag.FlagSet, help LoadingHelp) {
	fs.Uint64Var(&l.Seed, "seed", l.Seed, help.Seed)
	fs.IntVar(&l.LoadWorkers, "load-workers", l.LoadWorkers, help.LoadWorkers)
	fs.BoolVar(&l.Reuse, "reuse", l.Reuse, help.Reuse)
}

// LoadingSettings implements Settings for the workload whose Config embeds l.
func (l *Loading) LoadingSettings() *Loading { return l }

// Validate reports a negative --load-workers.
func (l Loading) Validate() []error {
	if l.LoadWorkers < 0 {
		return []error{Invalid("load-workers", l.LoadWorkers, "must be 0 (automatic) or more")}
	}
	return nil
}
