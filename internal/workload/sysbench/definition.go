package sysbench

import (
	"strings"
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/workload"
)

// Definition is sysbench OLTP as dbio offers it: its command, a suite's
// kind = "sysbench" tables, and its reports' title.
func Definition() workload.Definition {
	return workload.Definition{
		Name:  "sysbench",
		Title: "sysbench OLTP",
		Help: workload.Help{
			Short: "Run sysbench's OLTP workloads (sysbench 1.0 semantics) on an engine placed on the storage under test",
			Long: `Run one of sysbench 1.0's OLTP workloads, built into dbio, on a database
engine whose files sit on the target: the sbtest1..N tables with sysbench's data,
and its transaction shapes with the same query counts, so that TPS, QPS and
latency mean what they mean in a sysbench report. One timed step per user
count after a ramp-up; figures per step and per second: TPS, QPS, mean, p95 and
p99 latency, errors and reconnects.

Row ids are drawn uniformly by default. sysbench 1.0.20 itself defaults to
--rand-type=special (75 % of accesses on 1 % of the rows): pass
--rand-type special to reproduce a sysbench 1.0 run made with its defaults.`,
			Example: `  dbio sysbench --engine mariadb --target /mnt/nvme --tables 8 --table-size 1000000 \
               --workload oltp_read_write --users 1,8,32 --runtime 5m`,
		},
		RunDefaults: workload.RunDefaults{Users: "1,8,32", RampUp: 30 * time.Second, Step: 2 * time.Minute},
		Loading: workload.LoadingHelp{
			Seed:        "random seed for data and transaction inputs (recorded; same seed, same data)",
			LoadWorkers: "tables loaded in parallel (0: engine's best)",
			Reuse:       "keep the tables dbio loaded here with the same --tables, --table-size, --rand-type and --seed (by this loader version) instead of loading them again; other data is refused",
		},
		New: func() workload.Settings { return &Settings{Config: DefaultConfig()} },
	}
}

// Settings are sysbench's settings from flags or a suite table.
type Settings struct {
	Config
	workload.GivenUsers
}

// BindFlags adds the sysbench command's own flags.
func (s *Settings) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&s.Tables, "tables", s.Tables, "number of sbtest tables")
	fs.IntVar(&s.TableSize, "table-size", s.TableSize, "rows per table (about 250 bytes each on disk)")
	fs.StringVar(&s.Workload, "workload", s.Workload, "transaction shape: "+strings.Join(Workloads, ", "))
	fs.StringVar(&s.RandType, "rand-type", s.RandType, "distribution of row ids: uniform, special (sysbench 1.0's default), gaussian or pareto")
	fs.IntVar(&s.RangeSize, "range-size", s.RangeSize, "rows per range query")
	fs.BoolVar(&s.SkipTrx, "skip-trx", s.SkipTrx, "run every query in autocommit mode, without BEGIN and COMMIT")
}

// Table is what a suite's workload table decodes into.
func (s *Settings) Table() any { return &s.Config }

// Estimate is the load at the rate measured for the engine, 250 bytes a
// row, and sysbench's usual second-to-second variation: the means of the
// per-second QPS's and p99's over two runs of 2 users of oltp_read_write,
// 30 s measured on SQLite and PostgreSQL, which ranged 0.45 to 0.47 and
// 0.51 to 0.75, on the project's shared 2-core machine at a load average
// of 25 to 32 (a quiet machine varies less, and ends precise sooner).
func (s *Settings) Estimate(engine string) workload.Estimate {
	rows := s.Tables * s.TableSize
	load, how := loadRates().Estimate(float64(rows), engine)
	return workload.Estimate{Load: load, Space: uint64(rows) * 250, How: how,
		ThroughputCV: 0.46, LatencyCV: 0.63, VariationHow: "variation measured over two short runs on a shared 2-core machine"}
}

// loadRates are rows loaded a second, indexes included: dbio sysbench
// --tables 2 --table-size 100000 --users 1 --runtime 1s on each engine,
// read from its "loaded" line, on the project's 2-core machine with
// nothing else running (at a load average of 10 to 28 they were 220,000,
// 49,000 and 23,000).
func loadRates() workload.LoadRates {
	return workload.LoadRates{Unit: "rows", Measured: "200,000 rows loaded on a quiet 2-core machine",
		ByEngine: map[string]float64{"sqlite": 430000, "postgres": 230000, "mariadb": 340000}}
}

// Build makes sysbench for one run.
func (s *Settings) Build(o workload.BuildOptions) (workload.Built, error) {
	return workload.Built{Workload: New(s.Config), SpaceNeeded: EstimatedBytes(s.Config), Users: o.Users, Recorded: s.Config}, nil
}
