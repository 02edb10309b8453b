// Package fleet is the hosts of a run other than the one dbio runs on: how
// they are named (a suite's [[host]] tables, --host on the command line),
// which targets belong to which host ("h1:/srv/data"), and reaching them
// over the user's own ssh: one session type for every program dbio keeps
// running on a host (Session: a fio server, the shell holding a target's
// lock, a clock's round trips, dbio as a tenant), fio's version there, the
// fio servers dbio starts for a run and stops after it, and dbio's
// directory on a remote target.
//
// SSH is the user's: dbio runs the ssh program with the user's keys, agent
// and configuration (ssh -F when a host names an ssh_config), in batch mode
// so that it never prompts, and stores no credential of its own.
package fleet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"dbio/internal/controlchars"
)

// Local is the name of the machine dbio runs on, which needs no [[host]].
const Local = "local"

// DefaultFioPort is fio's own default server port.
const DefaultFioPort = 8765

// How a host's fio server is had.
const (
	// ServerStart: dbio starts fio --server over SSH for the run and stops it after.
	ServerStart = "start"
	// ServerRunning: the user runs the server; dbio only connects to it.
	ServerRunning = "running"
)

// Host is a machine dbio reaches over SSH.
type Host struct {
	// Name is what targets call the host ("h1" in "h1:/srv/data").
	Name string `toml:"name" json:"name"`
	// Destination is what ssh connects to: [user@]host, or a Host alias of
	// the user's ssh_config.
	Destination string `toml:"destination" json:"destination"`
	// SSHConfig is an ssh_config file given to ssh -F; empty uses the user's.
	SSHConfig string `toml:"ssh_config" json:"ssh_config,omitempty"`
	// Fio is fio's program on the host; empty is "fio" on its PATH.
	Fio string `toml:"fio" json:"fio,omitempty"`
	// WorkDir is where the fio server dbio starts runs; empty is the SSH
	// login's home.
	WorkDir string `toml:"work_dir" json:"work_dir,omitempty"`
	// Address is where the fio server listens, and where dbio's fio client
	// connects to it; empty is the address ssh resolves the destination to.
	Address string `toml:"address" json:"address,omitempty"`
	// FioPort is the fio server's port; 0 is DefaultFioPort.
	FioPort int `toml:"fio_port" json:"fio_port,omitempty"`
	// FioServer is ServerStart (the default) or ServerRunning.
	FioServer string `toml:"fio_server" json:"fio_server,omitempty"`
	// NodeExporter is where the host's Prometheus node exporter serves its
	// metrics, which dbio reads once a second during the points: ADDRESS,
	// ADDRESS:PORT, :PORT (at the host's address) or a URL; empty is the
	// host's address and DefaultNodeExporterPort; NodeExporterOff reads none.
	NodeExporter string `toml:"node_exporter" json:"node_exporter,omitempty"`
}

// DefaultNodeExporterPort is the Prometheus node exporter's own port.
const DefaultNodeExporterPort = 9100

// NodeExporterOff is the node_exporter setting that reads no exporter.
const NodeExporterOff = "off"

// NodeExporterURL is the host's exporter's metrics page, given the address
// its fio server listens at; "" when it is off.
func (h Host) NodeExporterURL(addr string) string {
	e := strings.TrimSpace(h.NodeExporter)
	switch {
	case e == NodeExporterOff:
		return ""
	case strings.HasPrefix(e, "http://") || strings.HasPrefix(e, "https://"):
		return e
	case e == "":
		return "http://" + net.JoinHostPort(addr, strconv.Itoa(DefaultNodeExporterPort)) + "/metrics"
	case strings.HasPrefix(e, ":"):
		return "http://" + net.JoinHostPort(addr, e[1:]) + "/metrics"
	}
	if host, port, err := net.SplitHostPort(e); err == nil {
		return "http://" + net.JoinHostPort(host, port) + "/metrics"
	}
	return "http://" + net.JoinHostPort(strings.Trim(e, "[]"), strconv.Itoa(DefaultNodeExporterPort)) + "/metrics"
}

// nodeExporterProblem is what is wrong with a node_exporter setting.
func nodeExporterProblem(e string) error {
	e = strings.TrimSpace(e)
	if e == "" || e == NodeExporterOff {
		return nil
	}
	if strings.HasPrefix(e, "http://") || strings.HasPrefix(e, "https://") {
		if u, err := url.Parse(e); err != nil || u.Host == "" {
			return fmt.Errorf("node_exporter %q is not a URL: give http://ADDRESS:PORT/metrics", e)
		}
		return nil
	}
	if strings.ContainsAny(e, " \t/\"'") {
		return fmt.Errorf("node_exporter %q: give ADDRESS, ADDRESS:PORT, :PORT or a URL (or %q)", e, NodeExporterOff)
	}
	port := ""
	if _, p, err := net.SplitHostPort(e); err == nil {
		port = p
	} else if strings.HasPrefix(e, ":") {
		port = e[1:]
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("node_exporter %q: port %q is not a port (1-65535)", e, port)
		}
	}
	return nil
}

// FioProgram is the fio the host runs.
func (h Host) FioProgram() string {
	if h.Fio == "" {
		return "fio"
	}
	return h.Fio
}

// Port is the fio server's port.
func (h Host) Port() int {
	if h.FioPort == 0 {
		return DefaultFioPort
	}
	return h.FioPort
}

// Starts says whether dbio starts the host's fio server.
func (h Host) Starts() bool { return h.FioServer != ServerRunning }

var hostName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,62}$`)

// ParseHostFlag reads --host NAME=DEST.
func ParseHostFlag(s string) (Host, error) {
	name, dest, ok := strings.Cut(s, "=")
	if !ok {
		return Host{}, fmt.Errorf("--host %q: give NAME=DESTINATION, e.g. --host h1=admin@10.0.0.11", s)
	}
	h := Host{Name: strings.TrimSpace(name), Destination: strings.TrimSpace(dest)}
	if errs := h.Problems(); len(errs) > 0 {
		return Host{}, fmt.Errorf("--host %q: %w", s, errors.Join(errs...))
	}
	return h, nil
}

// Problems are what is wrong with a host as written, one error each.
func (h Host) Problems() []error {
	var errs []error
	switch {
	case h.Name == Local:
		errs = append(errs, fmt.Errorf("host name %q is the machine dbio runs on: name the host otherwise", Local))
	case !hostName.MatchString(h.Name):
		errs = append(errs, fmt.Errorf("host name %q: use a letter then letters, digits, - or _ (e.g. h1, db-2)", h.Name))
	}
	switch {
	case h.Destination == "":
		errs = append(errs, fmt.Errorf("host %s has no SSH destination: give [user@]host or an alias of your ssh_config", h.Name))
	case strings.HasPrefix(h.Destination, "-") || strings.ContainsAny(h.Destination, " \t\n\"'\\"):
		// ssh would read a leading - as an option.
		errs = append(errs, fmt.Errorf("host %s: SSH destination %q: give [user@]host or an alias of your ssh_config, without spaces, quotes or a leading -", h.Name, h.Destination))
	}
	if h.Address != "" && !validAddress(h.Address) {
		// fio's client and server read "ADDRESS,PORT": a port, a comma or
		// a space in the address would name another server, or none.
		errs = append(errs, fmt.Errorf("host %s: address %q: give an IP address or a host name alone (e.g. 10.0.0.11, db2.example.net); the port is fio_port", h.Name, h.Address))
	}
	if h.FioPort < 0 || h.FioPort > 65535 {
		errs = append(errs, fmt.Errorf("host %s: fio_port %d is not a port (1-65535; 0 or absent is fio's %d)", h.Name, h.FioPort, DefaultFioPort))
	}
	if h.FioServer != "" && h.FioServer != ServerStart && h.FioServer != ServerRunning {
		errs = append(errs, fmt.Errorf("host %s: fio_server %q: use %q (dbio starts it for the run) or %q (you run it)", h.Name, h.FioServer, ServerStart, ServerRunning))
	}
	if err := nodeExporterProblem(h.NodeExporter); err != nil {
		errs = append(errs, fmt.Errorf("host %s: %w", h.Name, err))
	}
	for what, p := range map[string]string{"work_dir": h.WorkDir, "fio": h.Fio} {
		if err := controlchars.Check(p); err != nil {
			errs = append(errs, fmt.Errorf("host %s: %s %q %w: give the path without control characters", h.Name, what, p, err))
		}
	}
	return errs
}

var dnsName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$`)

// validAddress says whether a is an IP address or a host name, as a fio
// server's address must be.
func validAddress(a string) bool {
	if _, err := netip.ParseAddr(a); err == nil {
		return true
	}
	return len(a) <= 253 && dnsName.MatchString(a)
}

// Target is a target path and the host it is on ("" is the local machine).
type Target struct {
	Host string
	Path string
}

func (t Target) String() string {
	if t.Host == "" {
		return t.Path
	}
	return t.Host + ":" + t.Path
}

// Remote says whether the target is on another host.
func (t Target) Remote() bool { return t.Host != "" }

// ParseTarget reads a target: "h1:/srv/data" is /srv/data on host h1, any
// other path is local. A name before the colon needs an absolute path
// after it; a local path that itself holds such a colon is written ./x:/y.
func ParseTarget(s string) (Target, error) {
	name, path, ok := strings.Cut(s, ":")
	if !ok || !hostName.MatchString(name) {
		return Target{Path: s}, nil
	}
	if name == Local {
		name = ""
	}
	if !strings.HasPrefix(path, "/") {
		return Target{}, fmt.Errorf("target %q: a target on a host is NAME:/absolute/path (e.g. h1:/srv/data); a local path with a colon in it is written ./%s", s, s)
	}
	if err := controlchars.Check(path); err != nil {
		return Target{}, fmt.Errorf("target %q %w: give the path without control characters", s, err)
	}
	return Target{Host: name, Path: path}, nil
}

// Resolve reads targets against the hosts named, and checks the hosts:
// every problem at once, each naming its fix.
func Resolve(hosts []Host, targets []string) ([]Target, []error) {
	var errs []error
	for _, h := range hosts {
		errs = append(errs, h.Problems()...)
	}
	errs = append(errs, SetProblems(hosts)...)
	out, terrs := ResolveTargets(hosts, targets)
	errs = append(errs, terrs...)
	return out, append(errs, serverProblems(Hosts(hosts, out))...)
}

// serverProblems are the hosts a fio run uses that would share one fio
// server address: fio's client names a server's report and logs by its
// address alone, whatever the port, so two hosts at one address (given, or
// reached through one ssh destination) would mix their figures. Session.Open
// finds the same once ssh has resolved the destinations, but only once the
// run has begun. Two hosts giving one address and port are SetProblems'.
func serverProblems(used []Host) []error {
	var errs []error
	byAddress, byDestination := map[string]Host{}, map[string]Host{}
	for _, h := range used {
		if h.Address != "" {
			if other, ok := byAddress[h.Address]; ok && other.Port() != h.Port() {
				errs = append(errs, fmt.Errorf("hosts %s and %s both give address %s: fio's client names a server's report and logs by its address, whatever the port, so give each host its own address", other.Name, h.Name, h.Address))
			}
			byAddress[h.Address] = h
			continue
		}
		key := h.SSHConfig + "\x00" + h.Destination
		if other, ok := byDestination[key]; ok {
			errs = append(errs, fmt.Errorf("hosts %s and %s both reach %s over ssh, so their fio servers would share one address: fio's client names a server's report and logs by it, so give each host its own destination or address", other.Name, h.Name, h.Destination))
		}
		byDestination[key] = h
	}
	return errs
}

// SetProblems are the problems of hosts named together: a name given
// twice, two hosts on one fio server.
func SetProblems(hosts []Host) []error {
	var errs []error
	known := map[string]bool{}
	addrs := map[string]string{}
	for _, h := range hosts {
		if known[h.Name] {
			errs = append(errs, fmt.Errorf("host %s is named twice: give each host one name", h.Name))
		}
		known[h.Name] = true
		if h.Address != "" {
			// fio's client names a server's logs and report by its address.
			key := fmt.Sprintf("%s,%d", h.Address, h.Port())
			if other, ok := addrs[key]; ok {
				errs = append(errs, fmt.Errorf("hosts %s and %s both give fio server %s: give each host its own address", other, h.Name, key))
			}
			addrs[key] = h.Name
		}
	}
	return errs
}

// ResolveTargets reads targets against the hosts named, without checking
// the hosts themselves.
func ResolveTargets(hosts []Host, targets []string) ([]Target, []error) {
	var errs []error
	known := map[string]bool{}
	var names []string
	for _, h := range hosts {
		if !known[h.Name] {
			names = append(names, h.Name)
		}
		known[h.Name] = true
	}
	sort.Strings(names)
	var out []Target
	for _, s := range targets {
		t, err := ParseTarget(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if t.Remote() && !known[t.Host] {
			hint := "name it with --host " + t.Host + "=[user@]ADDRESS (or a [[host]] table in a suite)"
			if len(names) > 0 {
				hint += "; the hosts named are " + strings.Join(names, ", ")
			}
			errs = append(errs, fmt.Errorf("target %q is on host %s, which is not named: %s", s, t.Host, hint))
			continue
		}
		out = append(out, t)
	}
	return out, errs
}

// Hosts are the hosts the targets use, in the order first used.
func Hosts(hosts []Host, targets []Target) []Host {
	var names []string
	for _, t := range targets {
		if t.Remote() && !slices.Contains(names, t.Host) {
			names = append(names, t.Host)
		}
	}
	var out []Host
	for _, n := range names {
		for _, h := range hosts {
			if h.Name == n {
				out = append(out, h)
				break
			}
		}
	}
	return out
}
