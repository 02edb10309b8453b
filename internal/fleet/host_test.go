package fleet

import (
	"strings"
	"testing"
	"time"
)

func TestParseHostFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    Host
		problem string
	}{
		{in: "h1=root@10.0.0.2", want: Host{Name: "h1", Destination: "root@10.0.0.2"}},
		{in: "db-2=db2", want: Host{Name: "db-2", Destination: "db2"}},
		{in: "h1", problem: "give NAME=DESTINATION"},
		{in: "h1=", problem: "no SSH destination"},
		{in: "1h=x", problem: "use a letter then"},
		{in: "local=x", problem: "is the machine dbio runs on"},
		{in: "h1=-oProxyCommand=x", problem: "leading -"},
		{in: "h1=a b", problem: "without spaces"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseHostFlag(tc.in)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("ParseHostFlag(%q) = %+v, %v; want an error saying %q", tc.in, got, err, tc.problem)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseHostFlag(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	hosts := []Host{{Name: "h1", Destination: "a"}, {Name: "h2", Destination: "b"}}
	tests := []struct {
		name     string
		hosts    []Host
		targets  []string
		want     []Target
		problems []string
	}{
		{name: "local by default", targets: []string{"/srv/data", "data", "./x:/y"},
			want: []Target{{Path: "/srv/data"}, {Path: "data"}, {Path: "./x:/y"}}},
		{name: "on hosts", hosts: hosts, targets: []string{"h1:/srv/a", "h2:/srv/b", "local:/srv/c"},
			want: []Target{{Host: "h1", Path: "/srv/a"}, {Host: "h2", Path: "/srv/b"}, {Path: "/srv/c"}}},
		{name: "unknown host", hosts: hosts, targets: []string{"h3:/srv/a"},
			problems: []string{"host h3, which is not named: name it with --host h3=", "the hosts named are h1, h2"}},
		{name: "relative path on a host", hosts: hosts, targets: []string{"h1:data"},
			problems: []string{"NAME:/absolute/path"}},
		{name: "host named twice", hosts: append(hosts, Host{Name: "h1", Destination: "c"}),
			problems: []string{"host h1 is named twice"}},
		{name: "two hosts on one fio server", hosts: []Host{{Name: "a", Destination: "x", Address: "10.0.0.1"}, {Name: "b", Destination: "y", Address: "10.0.0.1"}},
			problems: []string{"hosts a and b both give fio server 10.0.0.1,8765"}},
		{name: "bad settings", hosts: []Host{{Name: "a", Destination: "x", FioPort: 70000, FioServer: "maybe"}},
			problems: []string{"fio_port 70000 is not a port", `fio_server "maybe"`}},
		{name: "two hosts on one address", hosts: []Host{{Name: "a", Destination: "x", Address: "10.0.0.1", FioPort: 8765}, {Name: "b", Destination: "y", Address: "10.0.0.1", FioPort: 8766}},
			targets: []string{"a:/srv", "b:/srv"}, problems: []string{"hosts a and b both give address 10.0.0.1", "whatever the port"}},
		{name: "two hosts through one destination", hosts: []Host{{Name: "a", Destination: "x"}, {Name: "b", Destination: "x", FioPort: 8766}},
			targets: []string{"a:/srv", "b:/srv"}, problems: []string{"hosts a and b both reach x over ssh"}},
		{name: "one destination, a host unused", hosts: []Host{{Name: "a", Destination: "x"}, {Name: "b", Destination: "x"}},
			targets: []string{"a:/srv"}},
		{name: "one destination, other ssh_configs", hosts: []Host{{Name: "a", Destination: "x", SSHConfig: "one"}, {Name: "b", Destination: "x", SSHConfig: "two"}},
			targets: []string{"a:/srv", "b:/srv"}},
		{name: "addresses", hosts: []Host{{Name: "a", Destination: "x", Address: "10.0.0.11"}, {Name: "b", Destination: "y", Address: "fd00::11"},
			{Name: "c", Destination: "z", Address: "db2.example.net"}}},
		{name: "an address with a port", hosts: []Host{{Name: "a", Destination: "x", Address: "10.0.0.11:8765"}},
			problems: []string{`address "10.0.0.11:8765": give an IP address or a host name alone`, "the port is fio_port"}},
		{name: "an address fio would split", hosts: []Host{{Name: "a", Destination: "x", Address: "10.0.0.11,9000"}, {Name: "b", Destination: "y", Address: "db 2"}},
			problems: []string{`address "10.0.0.11,9000"`, `address "db 2"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := Resolve(tc.hosts, tc.targets)
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			all := strings.Join(msgs, "\n")
			for _, p := range tc.problems {
				if !strings.Contains(all, p) {
					t.Errorf("problems %q lack %q", all, p)
				}
			}
			if len(tc.problems) == 0 && len(errs) > 0 {
				t.Errorf("unexpected problems: %s", all)
			}
			if tc.want != nil && !equalTargets(got, tc.want) {
				t.Errorf("Resolve = %v, want %v", got, tc.want)
			}
		})
	}
}

func equalTargets(a, b []Target) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFioServerArg(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string
	}{
		{"10.0.0.2", "ip:10.0.0.2,8765"},
		{"fe80::1", "ip6:fe80::1,8765"},
		{"db1.example", "db1.example,8765"},
	} {
		if got := FioServerArg(tc.addr, 8765); got != tc.want {
			t.Errorf("FioServerArg(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	if got, want := ShellQuote(`it's $HOME`), `'it'\''s $HOME'`; got != want {
		t.Errorf("ShellQuote = %s, want %s", got, want)
	}
}

func TestNodeExporter(t *testing.T) {
	tests := []struct {
		setting, addr, want, problem string
	}{
		{setting: "", addr: "10.0.0.11", want: "http://10.0.0.11:9100/metrics"},
		{setting: "", addr: "fe80::1", want: "http://[fe80::1]:9100/metrics"},
		{setting: "off", addr: "10.0.0.11", want: ""},
		{setting: ":9101", addr: "10.0.0.11", want: "http://10.0.0.11:9101/metrics"},
		{setting: "mon.example", addr: "10.0.0.11", want: "http://mon.example:9100/metrics"},
		{setting: "10.1.1.1:9200", addr: "10.0.0.11", want: "http://10.1.1.1:9200/metrics"},
		{setting: "https://mon.example/node/metrics", addr: "10.0.0.11", want: "https://mon.example/node/metrics"},
		{setting: ":99999", problem: "is not a port"},
		{setting: "a b", problem: "give ADDRESS, ADDRESS:PORT"},
		{setting: "http://", problem: "is not a URL"},
	}
	for _, tc := range tests {
		t.Run(tc.setting, func(t *testing.T) {
			h := Host{Name: "h1", Destination: "x", NodeExporter: tc.setting}
			errs := h.Problems()
			if tc.problem != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.problem) {
					t.Fatalf("problems %v, want one saying %q", errs, tc.problem)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("problems %v", errs)
			}
			if got := h.NodeExporterURL(tc.addr); got != tc.want {
				t.Errorf("NodeExporterURL(%q) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}

func TestParseEpoch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // ns since the epoch
		ok   bool
	}{
		{"1764214062.123456789\n", 1764214062123456789, true},
		{"1764214062.5", 1764214062500000000, true},
		{"1764214062", 0, false},
		{"1764214062.N", 0, false},
		{"1764214062.1234567890", 0, false},
	} {
		got, err := parseEpoch(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got.UnixNano() != tc.want) {
			t.Errorf("parseEpoch(%q) = %v, %v", tc.in, got.UnixNano(), err)
		}
	}
}

func TestClockOff(t *testing.T) {
	for _, tc := range []struct {
		offset, rtt time.Duration
		off         bool
	}{
		{offset: 10 * time.Millisecond, rtt: time.Millisecond},
		{offset: 60 * time.Millisecond, rtt: time.Millisecond, off: true},
		{offset: -60 * time.Millisecond, rtt: time.Millisecond, off: true},
		// Within the threshold once half the round trip is allowed for.
		{offset: 60 * time.Millisecond, rtt: 30 * time.Millisecond},
	} {
		if got := (ClockReading{Offset: tc.offset, RoundTrip: tc.rtt}).Off(); got != tc.off {
			t.Errorf("offset %v ± %v: off %v, want %v", tc.offset, tc.rtt/2, got, tc.off)
		}
	}
}
