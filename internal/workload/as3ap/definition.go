package as3ap

import (
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/workload"
)

// Definition is AS3AP as dbio offers it: its command, a suite's
// kind = "as3ap" tables, and its reports' title.
func Definition() workload.Definition {
	return workload.Definition{
		Name:  "as3ap",
		Title: "AS3AP",
		Help: workload.Help{
			Short: "AS3AP-style stress: interactive users added step by step over batch jobs until response time passes a ceiling",
			Long: `Build the four AS3AP relations (uniques, hundred, tenpct, updates) with --rows
rows each on a database engine whose files sit on the target, start --batch-jobs
background jobs that each read and update --batch-rows rows per transaction
continuously, and add interactive users (single-row transactions, no think
time) step by step: --start users first, --add more each step, until the
interactive response time (--ceiling-stat: mean, p95 or p99) passes --ceiling
or --max-users is reached. The run reports the largest load kept under the
ceiling, and per step the TPS and response time of interactive and batch work
apart.`,
			Example: `  dbio as3ap --engine mariadb --target /mnt/nvme --rows 1000000 --batch-jobs 3 \
            --start 1 --add 5 --ceiling 100ms --runtime 1m --ramp-time 10s`,
		},
		RunDefaults: workload.RunDefaults{Users: "1", RampUp: 10 * time.Second, Step: time.Minute,
			OwnSteps: "as3ap steps its users: use --start, --add and --max-users"},
		Loading: workload.LoadingHelp{
			Seed:        "random seed for data and transaction inputs (recorded; same seed, same data)",
			LoadWorkers: "relations loaded in parallel (0: engine's best)",
			Reuse:       "keep the relations dbio loaded here with the same --rows and --seed (by this loader version) instead of loading them again; other data is refused",
		},
		New: func() workload.Settings { return &Settings{Config: DefaultConfig(), Stepping: DefaultStepping()} },
	}
}

// Settings are AS3AP's settings from flags or a suite table.
type Settings struct {
	Config
	Stepping
}

// BindFlags adds the as3ap command's own flags.
func (s *Settings) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&s.Rows, "rows", s.Rows, "rows in each of the four relations (about 200 bytes each with indexes)")
	fs.IntVar(&s.BatchJobs, "batch-jobs", s.BatchJobs, "background batch jobs, running through every step")
	fs.IntVar(&s.BatchRows, "batch-rows", s.BatchRows, "rows each batch transaction reads and then updates (at least 100)")
	fs.IntVar(&s.Start, "start", s.Start, "interactive users in the first step")
	fs.IntVar(&s.Add, "add", s.Add, "interactive users added at each step")
	fs.IntVar(&s.MaxUsers, "max-users", s.MaxUsers, "stop after the step with this many users even under the ceiling")
	fs.DurationVar((*time.Duration)(&s.Ceiling), "ceiling", time.Duration(s.Ceiling), "interactive response time that ends the stepping once passed")
	fs.StringVar(&s.CeilingStat, "ceiling-stat", s.CeilingStat, "statistic of the interactive response time held to the ceiling: mean, p95 or p99")
}

// Table is what a suite's workload table decodes into: the relations' and
// the stepping's keys side by side.
func (s *Settings) Table() any { return s }

// Validate reports every bad setting of the relations and the stepping.
func (s *Settings) Validate() []error {
	return append(s.Config.Validate(), s.Stepping.Validate()...)
}

// Steps are the stepping's, whatever users were asked for.
func (s *Settings) Steps([]int) ([]int, string) { return s.Users(), s.Label() }

// Estimate is the four relations' load at the rate measured for the
// engine. AS3AP's steps stop at a response-time ceiling, not when
// precise: no variation is given.
func (s *Settings) Estimate(engine string) workload.Estimate {
	load, how := loadRates().Estimate(float64(4*s.Rows), engine)
	return workload.Estimate{Load: load, Space: EstimatedBytes(s.Config), How: how}
}

// loadRates are rows loaded a second over the four relations, indexes
// included: dbio as3ap --rows 100000 --start 1 --add 1 --max-users 1 on
// each engine, read from its "loaded" line, on the project's 2-core
// machine with nothing else running (at a load average of 12 to 25 they
// were 145,000, 45,000 and 53,000). ab-cache.toml's 1.2 million rows on
// MariaDB, on a disk capped at 600 IOPS, loaded at 190,000 to 280,000.
func loadRates() workload.LoadRates {
	return workload.LoadRates{Unit: "rows", Measured: "400,000 rows loaded on a quiet 2-core machine",
		ByEngine: map[string]float64{"sqlite": 280000, "postgres": 150000, "mariadb": 250000}}
}

// Build makes AS3AP for one run, stopped at the ceiling.
func (s *Settings) Build(workload.BuildOptions) (workload.Built, error) {
	c, err := s.ceiling()
	if err != nil {
		return workload.Built{}, err
	}
	st := s.Stepping
	return workload.Built{
		Workload: New(s.Config), SpaceNeeded: EstimatedBytes(s.Config), Users: st.Users(),
		Ceiling:  &c,
		Stepping: record{Start: st.Start, Add: st.Add, MaxUsers: st.MaxUsers, CeilingMS: c.Max, CeilingStat: st.CeilingStat},
		Recorded: s.Config,
	}, nil
}
