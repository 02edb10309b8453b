// Command benchfig prints the figures scripts/bench.sh judges, read from a
// dbio results directory, as shell-readable name=value lines:
//
//	go run ./scripts/benchfig RESULTS_DIR
//
// Step figures come from the last step; CPU shares are means over its
// measured seconds, in % of the whole machine, memory the largest seen.
package main

import (
	"fmt"
	"os"
	"sort"

	"dbio/internal/results"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchfig RESULTS_DIR")
		os.Exit(2)
	}
	l, err := results.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchfig:", err)
		os.Exit(1)
	}
	out := map[string]any{"status": string(l.Run.Status)}
	if ld := l.Run.Load; ld != nil {
		out["load_s"] = ld.Seconds
		out["load_rows_per_s"] = ld.RowsPerSec
		out["load_scale_per_min"] = ld.ScalePerMin
		out["load_mb_per_s"] = ld.MBPerSec
		out["load_mb"] = float64(ld.BytesWritten) / 1e6
		// --data reset: what the run's data was, and the copy's costs.
		if d := ld.Data; d != nil {
			out["data_state"] = d.State
			if c := d.Copy; c != nil {
				out["pristine_keep_s"] = c.Seconds
				out["pristine_method"] = c.Method
				out["pristine_mb"] = float64(c.Bytes) / 1e6
			}
			if d.State == results.DataReset {
				out["reset_s"] = d.ResetSeconds
				out["reset_method"] = d.ResetMethod
				out["reset_mb"] = float64(d.ResetBytes) / 1e6
			}
		}
	}
	failed := 0
	for _, c := range l.Run.Checks {
		if !c.Passed && !c.Skipped {
			failed++
		}
	}
	out["checks"] = len(l.Run.Checks)
	out["checks_failed"] = failed
	if n := len(l.Steps); n > 0 {
		s := l.Steps[n-1]
		for _, f := range s.Figures {
			out[string(f.Name)] = f.Value
		}
		if p := s.Pacing; p != nil {
			out["offered_tps"], out["achieved_tps"] = p.OfferedTPS, p.AchievedTPS
			if p.Connections > 0 {
				out["pool"] = p.Connections
			}
			if p.Transactions > 0 {
				out["late_pct"] = 100 * float64(p.Late) / float64(p.Transactions)
			}
		}
		out["users"] = s.Users
		if t := s.Telemetry; t != nil {
			m := t.Metrics
			out["dbio_cpu_pct"] = m["proc_dbio_cpu_pct"].Mean
			out["dbio_rss_mb"] = m["proc_dbio_rss_mb"].Max
			out["server_cpu_pct"] = m["proc_server_cpu_pct"].Mean
			out["idle_pct"] = m["cpu_idle_pct"].Mean + m["cpu_iowait_pct"].Mean
			// What neither dbio nor its server used: other processes and the kernel's own work.
			out["others_cpu_pct"] = 100 - out["idle_pct"].(float64) - m["proc_dbio_cpu_pct"].Mean - m["proc_server_cpu_pct"].Mean
		}
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := out[k].(type) {
		case float64:
			fmt.Printf("%s=%.2f\n", k, v)
		default:
			fmt.Printf("%s=%v\n", k, v)
		}
	}
}
