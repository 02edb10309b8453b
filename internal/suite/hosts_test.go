package suite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const fleetSuite = `name = "cluster"

[[host]]
name = "h1"
destination = "admin@10.0.0.11"

[[host]]
name = "h2"
destination = "h2"
ssh_config = "%SSHCONFIG%"
fio_port = 8766

[targets.cluster]
paths = ["h1:/srv/data", "h2:/srv/data"]

[targets.one]
path = "h2:/srv/data"

[workloads.corners]
kind = "disk"
profile = "four-corners"
size = "1G"

[[runs]]
name = "corners"
workload = "corners"
data = ["cluster", "one"]
`

// fleetSuiteText is fleetSuite with its second host's ssh_config a file
// of the test's own, which validation requires to exist.
func fleetSuiteText(t *testing.T) (text, sshConfig string) {
	sshConfig = filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(sshConfig, []byte("Host h2\n  HostName 10.0.0.12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(fleetSuite, "%SSHCONFIG%", sshConfig, 1), sshConfig
}

func TestHostsAndTargetsOnThem(t *testing.T) {
	text, sshConfig := fleetSuiteText(t)
	p, err := Parse("s.toml", []byte(text), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hosts) != 2 || p.Hosts[1].SSHConfig != sshConfig || p.Hosts[1].FioPort != 8766 {
		t.Fatalf("hosts %+v", p.Hosts)
	}
	if len(p.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(p.Runs))
	}
	if d := p.Runs[0].Data; !d.OnHosts() || !slices.Equal(d.Dirs(), []string{"h1:/srv/data", "h2:/srv/data"}) {
		t.Errorf("the cluster target: %+v", d)
	}
	if d := p.Runs[1].Data; !d.OnHosts() || !slices.Equal(d.Dirs(), []string{"h2:/srv/data"}) {
		t.Errorf("the one-host target: %+v", d)
	}
	// The dry run shows the targets on their hosts, as written.
	var out bytes.Buffer
	if err := p.DryRun(&out, func(Run) Estimated { return Estimated{Typical: time.Minute, Ceiling: time.Minute} }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cluster  data  h1:/srv/data, h2:/srv/data", "one      data  h2:/srv/data"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the dry run does not say %q:\n%s", want, out.String())
		}
	}
}

func TestHostProblemsPointAtLines(t *testing.T) {
	suiteText, sshConfig := fleetSuiteText(t)
	// ssh would be given these files only once the run has begun, and
	// find no configuration: they are refused with the rest of the file.
	missing, dir := filepath.Join(t.TempDir(), "missing"), t.TempDir()
	wrote := fmt.Sprintf("ssh_config = %q", sshConfig)
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"unknown host", `paths = ["h1:/srv/data", "h2:/srv/data"]`, `paths = ["h1:/srv/data", "h3:/srv/data"]`,
			[]string{`targets.cluster.paths: target "h3:/srv/data" is on host h3, which is not named`}},
		{"relative path", `path = "h2:/srv/data"`, `path = "h2:srv/data"`,
			[]string{"targets.one.path: target \"h2:srv/data\": a target on a host is NAME:/absolute/path"}},
		{"local path among hosts", `paths = ["h1:/srv/data", "h2:/srv/data"]`, `paths = ["h1:/srv/data", "/srv/data"]`,
			[]string{"targets.cluster.paths: /srv/data is on this machine"}},
		{"bad destination", `destination = "h2"`, `destination = "-oProxyCommand=x"`,
			[]string{"host[1]: host h2: SSH destination"}},
		{"named twice", `name = "h2"`, `name = "h1"`,
			[]string{"host: host h1 is named twice"}},
		{"a driver on a disk run", `data = ["cluster", "one"]`, `data = ["cluster", "one"]` + "\ndriver = \"host\"",
			[]string{"runs[0].driver: applies to database runs"}},
		{"a limit on a host", "[targets.one]\n", "[targets.one]\nlimit = \"riops=100\"\n",
			[]string{"targets.one.limit: a storage-class limit caps devices on this machine"}},
		{"ssh_config missing", wrote, fmt.Sprintf("ssh_config = %q", missing),
			[]string{fmt.Sprintf("line 10: host[1].ssh_config: %q: no such file or directory: give the path of an ssh_config file", missing)}},
		{"ssh_config a directory", wrote, fmt.Sprintf("ssh_config = %q", dir),
			[]string{fmt.Sprintf("line 10: host[1].ssh_config: %q is a directory: give the path of an ssh_config file", dir)}},
		// A relative path is read from the directory dbio runs in, as ssh -F reads it.
		{"relative ssh_config missing", wrote, `ssh_config = "fleet/ssh_config"`,
			[]string{`line 10: host[1].ssh_config: "fleet/ssh_config": no such file or directory`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(suiteText, tc.from, tc.to, 1)
			if text == suiteText {
				t.Fatalf("%q is not in the suite", tc.from)
			}
			_, err := Parse("s.toml", []byte(text), testEnv(nil))
			if err == nil {
				t.Fatal("the suite was accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("problems\n%v\nlack %q", err, w)
				}
			}
		})
	}
}
