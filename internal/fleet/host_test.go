package fleet

import (
	"strings"
	"testing"
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
