package suite

import (
	"dbio/internal/workload"
	"dbio/internal/workload/as3ap"
	"dbio/internal/workload/sysbench"
	"dbio/internal/workload/tpcc"
)

// testEnv is the environment dbio gives a suite: its engines and workloads.
func testEnv(getenv func(string) string) Env {
	return Env{
		Getenv:    getenv,
		Engines:   []string{"sqlite", "postgres", "mariadb", "mysql"},
		Workloads: workload.NewRegistry(tpcc.Definition(), sysbench.Definition(), as3ap.Definition()),
		Figures:   []string{"cpu-iowait", "fio-mbs", "latency-p99", "seconds", "tpm"},
	}
}
