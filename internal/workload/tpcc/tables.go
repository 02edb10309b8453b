package tpcc

// Tables names the nine TPC-C tables, so a restore can be verified by row counts.
func (w *Workload) Tables() []string { return append([]string(nil), Tables...) }
