package report

import (
	"dbio/internal/analysis"
)

// compareFleetHosts compares each host's rows of fleet runs, the fleets'
// own rows being compared above it with any run's steps; nil unless the
// baseline ran on a fleet.
func compareFleetHosts(runs []*runView) (*section, []string) {
	rows := analysis.FleetHostRows(runViews(runs))
	if len(rows) == 0 {
		return nil, nil
	}
	sec := &section{ID: "cmp-fleet-hosts", Title: "Hosts compared"}
	sec.add(&paragraph{Text: "The tables above compare the fleets: each step's figures are the hosts' summed over the window in which all of them were measuring, " +
		"and its latency percentiles those of every host's latencies merged. The tables below compare each host's own row of every step, over the same window, with the same host's in A."})
	id := func(s string) string { return "cmp-fleet-hosts-" + s }
	sums := abTables(sec, "step · host", "host row", analysis.FleetHostMetrics(runs[0].Recorded), rows, runs, id)
	return sec, summarizeAB("Each host", sums, runs, "host row")
}
