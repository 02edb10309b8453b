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

// Estimate: about 200,000 rows a second to load on a 2-core machine (this
// project's measurements), and 250 bytes a row.
func (s *Settings) Estimate() workload.Estimate {
	rows := s.Tables * s.TableSize
	return workload.Estimate{Load: time.Duration(rows/200000+1) * time.Second, Space: uint64(rows) * 250}
}

// Build makes sysbench for one run.
func (s *Settings) Build(o workload.BuildOptions) (workload.Built, error) {
	return workload.Built{Workload: New(s.Config), SpaceNeeded: EstimatedBytes(s.Config), Users: o.Users, Recorded: s.Config}, nil
}
