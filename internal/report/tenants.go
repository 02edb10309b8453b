package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"dbio/internal/results"
)

// tenantRows are the rows of a run of tenants on several hosts: for each
// step, the fleet's row and each host's beside it.
type tenantRows struct {
	names []results.FigureName
	rows  []tenantRow
}

type tenantRow struct {
	step, host string
	fleet      bool
	seconds    int
	figures    []float64
	latency    [4]float64 // p50, p95, p99, p99.9 in ms
	// late is how long after the barrier's instant the host started (ms).
	late string
}

// readTenantRows reads them from the run; ok is false for another run.
func readTenantRows(run results.Run, steps []results.Step) (tenantRows, bool) {
	var out tenantRows
	if run.Tenants == nil {
		return out, false
	}
	late := map[string]string{}
	for _, h := range run.Tenants.Hosts {
		if !h.Started.IsZero() {
			late[h.Host] = fixed(h.LateMS, 1)
		}
	}
	for _, s := range steps {
		f := s.Fleet
		if f == nil || len(f.Hosts) == 0 {
			continue
		}
		if out.names == nil {
			for _, fig := range f.Hosts[0].Figures {
				out.names = append(out.names, fig.Name)
			}
		}
		fleetRow := tenantRow{step: s.Name, host: "fleet", fleet: true, seconds: f.Seconds, latency: tenantLatencies(f.Latency.P50US, f.Latency.P95US, f.Latency.P99US, f.Latency.P999US)}
		for _, n := range out.names {
			v, _ := s.Figure(n)
			fleetRow.figures = append(fleetRow.figures, v)
		}
		out.rows = append(out.rows, fleetRow)
		for _, h := range f.Hosts {
			row := tenantRow{host: h.Host, seconds: f.Seconds, late: late[h.Host],
				latency: tenantLatencies(h.Latency.P50US, h.Latency.P95US, h.Latency.P99US, h.Latency.P999US)}
			for _, n := range out.names {
				v, _ := h.Figure(n)
				row.figures = append(row.figures, v)
			}
			out.rows = append(out.rows, row)
		}
	}
	return out, len(out.rows) > 0
}

func tenantLatencies(us ...int64) [4]float64 {
	var out [4]float64
	for i := range out {
		out[i] = float64(us[i]) / 1000
	}
	return out
}

// tenantsCaption says how the fleet's figures were made.
func tenantsCaption(t *results.Tenants) string {
	return fmt.Sprintf("Each step ran on %d hosts at once, dbio on each driving its own server; every host loaded first, and all started their steps at one instant "+
		"(their actual starts %s ms apart). The fleet's throughput is the sum of the hosts' over the window in which all of them were measuring; "+
		"its latency percentiles are those of every host's histograms merged, never an average of the hosts' percentiles. "+
		"Each host's throughput covers the same window, so the host rows add up to the fleet's; its latency covers its own measured step.",
		len(t.Hosts), fixed(t.SkewMS, 1))
}

// tenantsTable is the report's table of a tenants run; nil for another run.
func tenantsTable(run results.Run, steps []results.Step, id string) *table {
	rows, ok := readTenantRows(run, steps)
	if !ok {
		return nil
	}
	t := &table{ID: id, Title: "Fleet and hosts", Caption: tenantsCaption(run.Tenants)}
	t.Columns = []column{{Name: "step"}, {Name: "host"}, {Name: "window (s)", Numeric: true}}
	for _, n := range rows.names {
		t.Columns = append(t.Columns, column{Name: n.Def().Heading(), Numeric: true})
	}
	for _, n := range []string{"p50", "p95", "p99", "p99.9"} {
		t.Columns = append(t.Columns, column{Name: n, Numeric: true, Group: "latency (ms)"})
	}
	t.Columns = append(t.Columns, column{Name: "started after the barrier (ms)", Numeric: true})
	for _, r := range rows.rows {
		c := []cell{textCell(r.step), textCell(r.host), numCell(float64(r.seconds), thousands)}
		for _, v := range r.figures {
			c = append(c, numCell(v, thousands))
		}
		for _, v := range r.latency {
			c = append(c, numCell(v, millis))
		}
		c = append(c, textCell(r.late))
		if r.fleet {
			for i := range c {
				c[i].Class = "key"
			}
		}
		t.Rows = append(t.Rows, c)
	}
	return t
}

// tenantsSection is the report's section of a tenants run, with its finding.
func tenantsSection(r *runView, prefix string) (*section, string) {
	t := tenantsTable(r.Run, r.Steps, prefix+"tenants-fleet")
	if t == nil {
		return nil, ""
	}
	sec := &section{ID: prefix + "tenants", Title: "Tenants on " + plural(len(r.Run.Tenants.Hosts), "host", "hosts")}
	sec.add(t)
	return sec, fmt.Sprintf("The workload ran on %s at once, started at one barrier (their starts %s ms apart); the fleet's figures are summed over the window all of them measured.",
		plural(len(r.Run.Tenants.Hosts), "host", "hosts"), fixed(r.Run.Tenants.SkewMS, 1))
}

// tenantsText prints the fleet's row and each host's for every step of a
// tenants run, for the terminal.
func tenantsText(w io.Writer, run results.Run, steps []results.Step) {
	rows, ok := readTenantRows(run, steps)
	if !ok {
		return
	}
	fmt.Fprintf(w, "\nfleet and hosts (throughput over the window every host measured; latency: the fleet's from the hosts' histograms merged; starts %s ms apart):\n", fixed(run.Tenants.SkewMS, 1))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "step\thost\twindow s\t")
	for _, n := range rows.names {
		fmt.Fprintf(tw, "%s\t", n.Def().Heading())
	}
	fmt.Fprint(tw, "p50 ms\tp99 ms\tlate ms\t\n")
	for _, r := range rows.rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t", r.step, r.host, r.seconds)
		for _, v := range r.figures {
			fmt.Fprintf(tw, "%s\t", thousands(v))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", millis(r.latency[0]), millis(r.latency[2]), r.late)
	}
	tw.Flush()
}
