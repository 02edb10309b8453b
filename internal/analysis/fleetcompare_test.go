package analysis

import (
	"path/filepath"
	"strings"
	"testing"

	"dbio/internal/results"
)

// renamedFleet is a device fleet run whose hosts are named anew, in the
// order given: another fleet's hosts.
func renamedFleet(t *testing.T, dir string, names map[string]string, drop string) *Recorded {
	t.Helper()
	l, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range l.Steps {
		if s.Fio == nil || s.Fio.Fleet == nil {
			continue
		}
		p := *s.Fio
		f := *p.Fleet
		f.Hosts = nil
		for _, h := range p.Fleet.Hosts {
			if h.Host == drop {
				continue
			}
			h.Host = names[h.Host]
			f.Hosts = append(f.Hosts, h)
		}
		p.Fleet = &f
		l.Steps[i].Fio = &p
	}
	return NewRecorded(l)
}

func TestFleetHostRows(t *testing.T) {
	a := loadRecorded(t, filepath.Join("..", "report", "testdata", "disk-fleet-a"))
	bDir := filepath.Join("..", "report", "testdata", "disk-fleet-b")
	same := map[string]string{"h1": "h1", "h2": "h2", "h3": "h3"}
	other := map[string]string{"h1": "s1", "h2": "s2", "h3": "s3"}
	cases := []struct {
		name string
		b    *Recorded
		// rows is how many rows; first the first row's label, and bHost
		// the host whose IOPS B's side of it holds (B's host at bPlace).
		rows         int
		first, bHost string
		warning      string
		bPlace       int
	}{
		{"the same hosts, by name", renamedFleet(t, bDir, same, ""), 18, "4k-randread · h1", "h1", "", 0},
		{"other hosts, in order", renamedFleet(t, bDir, other, ""), 18, "4k-randread · h1", "s1", "in the order each run named its hosts (h1 with s1, h2 with s2, h3 with s3)", 0},
		{"fewer hosts", renamedFleet(t, bDir, other, "h1"), 12, "4k-randread · h1", "s2", "each host's rows are compared for the first 2 hosts of each", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := FleetHostRows([]*Recorded{a, c.b})
			if len(rows) != c.rows || rows[0].Label != c.first {
				t.Fatalf("%d rows, first %q; want %d, %q", len(rows), rows[0].Label, c.rows, c.first)
			}
			bStep := rows[0].Steps[1]
			want := c.b.Fio[0].Fio.Fleet.Hosts[c.bPlace]
			if want.Host != c.bHost || bStep == nil || Value(*bStep, results.FigureIOPS) != want.Total.IOPS {
				t.Errorf("B's side of %s: %+v, want %s's IOPS %v", rows[0].Label, bStep, c.bHost, want.Total.IOPS)
			}
			if v := Value(*rows[0].Steps[0], results.FigureIOPS); v != a.Fio[0].Fio.Fleet.Hosts[0].Total.IOPS {
				t.Errorf("A's side %v, want h1's %v", v, a.Fio[0].Fio.Fleet.Hosts[0].Total.IOPS)
			}
			_, warnings := Comparability([]*Recorded{a, c.b}, Names{Run: func(i int) string { return string(rune('A' + i)) }, Workload: func(k string) string { return k }})
			if got := strings.Join(warnings, "\n"); c.warning != "" && !strings.Contains(got, c.warning) || c.warning == "" && strings.Contains(got, "host") {
				t.Errorf("warnings %q, want %q", got, c.warning)
			}
		})
	}
}

// A tenants run's host rows carry each host's throughput over the common
// window and its own latency.
func TestTenantHostRows(t *testing.T) {
	r := loadRecorded(t, filepath.Join("..", "report", "testdata", "tenants-fleet"))
	rows := FleetHostRows([]*Recorded{r, r})
	if len(rows) != 2 || rows[1].Label != "users-1 · h2" {
		t.Fatalf("rows %+v, want users-1 · h1 and h2", rows)
	}
	f := r.Workloads[0].Steps[0].Fleet
	h2 := f.Hosts[1]
	nopm, _ := h2.Figure(results.FigureNOPM)
	got := rows[1].Steps[1]
	if Value(*got, results.FigureNOPM) != nopm || nopm <= 0 {
		t.Errorf("h2's NOPM %v, the fleet detail's %v", Value(*got, results.FigureNOPM), nopm)
	}
	var p99 Metric
	for _, m := range FleetHostMetrics(r) {
		if m.ID == "latency-p99" {
			p99 = m
		}
	}
	if p99.Value == nil || p99.Value(*got) != float64(h2.Latency.P99US)/1000 {
		t.Errorf("h2's p99 is not its own latency's %v ms", float64(h2.Latency.P99US)/1000)
	}
}

// TestFleetComparability: a fleet against one machine is refused, unless
// the fleet is of one host, which is one machine's figures (the study's
// driver on the database host against the driver on another host);
// fleets of different sizes or hosts compare with a warning.
func TestFleetComparability(t *testing.T) {
	tenants := func(hosts ...string) *Recorded {
		r := &Recorded{Loaded: &results.Loaded{}}
		r.Run.Tenants = &results.Tenants{}
		for _, h := range hosts {
			r.Run.Tenants.Hosts = append(r.Run.Tenants.Hosts, results.TenantHost{Host: h})
		}
		return r
	}
	one := &Recorded{Loaded: &results.Loaded{}}
	tests := []struct {
		name           string
		a, b           *Recorded
		reason, warned string
	}{
		{"two machines", one, one, "", ""},
		{"a fleet against one machine", tenants("h1", "h2"), one, "compare a fleet run with another fleet run", ""},
		{"one machine against a fleet", one, tenants("h1", "h2"), "compare a fleet run with another fleet run", ""},
		{"a fleet of one against one machine", tenants("h1"), one, "", "a fleet of one host is compared as one machine"},
		{"one machine against a fleet of one", one, tenants("db1"), "", "a fleet of one host is compared as one machine"},
		{"fleets of different sizes", tenants("h1", "h2"), tenants("h1"), "", "sums over different numbers of hosts"},
		{"the same fleet", tenants("h1", "h2"), tenants("h2", "h1"), "", ""},
	}
	for _, tt := range tests {
		reason, warning := fleetComparability(tt.a, tt.b, "A", "B")
		if (tt.reason == "") != (reason == "") || !strings.Contains(reason, tt.reason) {
			t.Errorf("%s: reason %q, want one saying %q", tt.name, reason, tt.reason)
		}
		if (tt.warned == "") != (warning == "") || !strings.Contains(warning, tt.warned) {
			t.Errorf("%s: warning %q, want one saying %q", tt.name, warning, tt.warned)
		}
	}
}
