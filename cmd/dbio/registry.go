package main

import (
	"dbio/internal/workload"
	"dbio/internal/workload/as3ap"
	"dbio/internal/workload/sysbench"
	"dbio/internal/workload/tpcc"
)

// workloads are the database workloads dbio offers. Each gets a command,
// a suite kind and its reports' title from its definition: a new workload
// is its own package and one more line here.
func workloads() *workload.Registry {
	return workload.NewRegistry(
		tpcc.Definition(),
		sysbench.Definition(),
		as3ap.Definition(),
	)
}
