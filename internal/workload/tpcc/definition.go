package tpcc

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/workload"
)

// Definition is TPC-C as dbio offers it: its command, a suite's
// kind = "tpcc" tables, and its reports' title.
func Definition() workload.Definition {
	return workload.Definition{
		Name:  "tpcc",
		Title: "TPC-C",
		Help: workload.Help{
			Short: "Run TPC-C on an engine placed on the storage under test",
			Long: `Run TPC-C (specification revision 5.11) on a database engine whose files sit on
the target: build the database (or reuse one with --reuse), run one timed step
per virtual-user count after a ramp-up, check the consistency conditions, and
write a results directory with TPM, NOPM and latency percentiles per step.`,
			Example: `  dbio tpcc --engine sqlite --target /mnt/nvme --warehouses 4 \
            --users 1,2,3,5,8 --ramp-time 30s --runtime 2m`,
		},
		RunDefaults: workload.RunDefaults{Users: "1,2,3,5,8", RampUp: 30 * time.Second, Step: 2 * time.Minute},
		Loading: workload.LoadingHelp{
			Seed:        "random seed for data and transaction inputs (recorded; same seed, same data)",
			LoadWorkers: "warehouses loaded in parallel (0: engine's best)",
			Reuse:       "keep the database dbio loaded here with the same --warehouses and --seed (by this loader version) instead of loading it again; other data is refused",
		},
		New: func() workload.Settings {
			return &Settings{Config: Config{Warehouses: 1, Loading: workload.Loading{Seed: 42}}}
		},
	}
}

// Settings are TPC-C's settings from flags or a suite table.
type Settings struct {
	Config
}

// Steps implements workload.Settings: with keying and think times the run
// is one step of terminals, ten per warehouse unless --terminals says
// otherwise; back to back, the users asked for, one step per count.
func (s *Settings) Steps(given []int) ([]int, string) {
	if !s.KeyingThinking {
		return given, workload.UserSteps(given)
	}
	n := s.terminals()
	return []int{n}, fmt.Sprintf("%d terminals", n)
}

// OwnSteps implements workload.StepsOwner: paced terminals are set by
// --terminals, not --users.
func (s *Settings) OwnSteps() string {
	if !s.KeyingThinking {
		return ""
	}
	return "with --keying-thinking TPC-C runs one step of terminals: set them with --terminals (default ten per warehouse)"
}

// poolFlag sets Config.Pool only when --pool is given, so that an explicit
// 0 is refused rather than read as "one connection per terminal".
type poolFlag struct{ pool **int }

func (f poolFlag) String() string {
	if *f.pool == nil {
		return ""
	}
	return strconv.Itoa(**f.pool)
}

func (f poolFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number of connections", v)
	}
	*f.pool = &n
	return nil
}

func (f poolFlag) Type() string { return "int" }

// BindFlags adds TPC-C's own flags, shared by every command that runs TPC-C.
func (s *Settings) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&s.Warehouses, "warehouses", s.Warehouses, "TPC-C scale: warehouses (about 100 MB each)")
	fs.BoolVar(&s.KeyingThinking, "keying-thinking", s.KeyingThinking, "add the specification's keying and think times: the run is then one step of terminals (--terminals) behind a transaction monitor (--pool)")
	fs.IntVar(&s.Terminals, "terminals", s.Terminals, "with --keying-thinking: how many terminals (0: ten per warehouse)")
	fs.Var(poolFlag{&s.Pool}, "pool", "with --keying-thinking: the connections the terminals share through a transaction monitor (default one per terminal)")
	fs.BoolVar(&s.TerminalsOverSpec, "terminals-over-spec", s.TerminalsOverSpec, "allow more than the specification's ten terminals per warehouse")
}

// Table is what a suite's workload table decodes into.
func (s *Settings) Table() any { return &s.Config }

// Estimate is the load at the rate measured for the engine, and TPC-C's
// usual second-to-second variation: the medians of the per-second TPM's
// and p99's over three runs of 2 users on 1 and 2 warehouses, 30 to 55 s
// measured on SQLite and PostgreSQL, which ranged 0.30 to 0.48 and 0.40
// to 0.87, on the project's shared 2-core machine at a load average of 8
// to 27 (a quiet machine varies less, and ends precise sooner).
func (s *Settings) Estimate(engine string) workload.Estimate {
	load, how := loadRates().Estimate(float64(s.Warehouses), engine)
	check, checkHow := checkRates().Estimate(float64(s.Warehouses), engine)
	return workload.Estimate{Load: load, Space: EstimatedBytes(s.Warehouses), How: how,
		ThroughputCV: 0.33, LatencyCV: 0.70, VariationHow: "variation measured over three short runs on a shared 2-core machine",
		Check: check, CheckHow: checkHow}
}

// checkRates are warehouses the four consistency conditions check a
// second after a run: run.json's checks phase of dbio tpcc --users 2
// --runtime 5s --repeat 2 --data reset at 1 and 4 warehouses on each
// engine, uncapped, on the project's 2-core machine at a load average of
// 7 to 10 (other tests running): the four runs' warehouses over their
// seconds (PostgreSQL 0.13 and 0.17 s at 1 warehouse, 0.58 and 0.30 s at
// 4; MariaDB 0.28, 0.60, 2.26, 1.15 s; SQLite 0.08, 0.03, 0.55, 0.29 s).
// The checks scan every order line, so their time grows with the
// warehouses; a small database's still counts a second.
func checkRates() workload.LoadRates {
	return workload.LoadRates{Unit: "warehouses", Measured: "TPC-C's checks timed after short runs on a shared 2-core machine",
		ByEngine: map[string]float64{"sqlite": 10, "postgres": 8.5, "mariadb": 2.3}}
}

// loadRates are warehouses loaded a second, indexes and statistics
// included: dbio tpcc --warehouses 4 --users 1 --runtime 1s --skip-checks
// twice on each engine, its "loaded" and "built indexes" lines summed, on
// the project's 2-core machine with nothing else running (SQLite 6.3 and
// 6.2 s, PostgreSQL 3.7 and 3.7 s, MariaDB 5.5 and 5.4 s). A machine other
// work keeps busy loads slower: at a load average of 10 to 28 the same
// engines loaded 0.25, 0.15 and 0.11 warehouses a second, which made the
// flagship studies' dry runs count 4m12s of loads they did in 36 s.
func loadRates() workload.LoadRates {
	return workload.LoadRates{Unit: "warehouses", Measured: "4 warehouses loaded on a quiet 2-core machine",
		ByEngine: map[string]float64{"sqlite": 0.63, "postgres": 1.1, "mariadb": 0.73}}
}

// Build makes TPC-C for one run.
func (s *Settings) Build(o workload.BuildOptions) (workload.Built, error) {
	cfg := s.Config
	cfg.SkipChecks = o.SkipChecks
	users, _ := s.Steps(o.Users)
	if cfg.KeyingThinking {
		// run.json records the terminals the run had, the default resolved.
		cfg.Terminals = cfg.terminals()
	}
	return workload.Built{Workload: New(cfg), SpaceNeeded: EstimatedBytes(cfg.Warehouses), Users: users, Recorded: cfg}, nil
}
