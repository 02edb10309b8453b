package runner

import (
	"context"
	"fmt"
	"strings"

	"dbio/internal/fleet"
	"dbio/internal/results"
	"dbio/internal/telemetry"
)

// ServerHost is the host of a server dbio drives from here by its DSN
// (--driver coordinator): no dbio runs there, so its CPU and disks are read
// from its Prometheus node exporter, found as a fio fleet host's is.
type ServerHost struct {
	Host fleet.Host
	// Target is where the server's data is on the host: the block devices
	// behind it (found over ssh) are the ones watched.
	Target string
	Shell  fleet.Shell
}

// watchServerHost finds the host's node exporter and the devices behind
// its target, reads the exporter once, and records the host in run.json
// (hosts[]). What cannot be read is a note, on the terminal and in
// run.json, with its fix: the run goes on without those figures. Only a
// run.json that cannot be written is an error.
func watchServerHost(ctx context.Context, sh ServerHost, env Env, dir *results.Dir) ([]telemetry.RemoteHost, error) {
	h := sh.Host
	rec := results.FleetHost{Name: h.Name, Destination: h.Destination, Status: results.HostOK}
	var notes []string
	var err error
	// record says what was not read and writes the host into run.json;
	// it returns no host to read, for the ways out that read none.
	record := func() ([]telemetry.RemoteHost, error) {
		for _, n := range notes {
			fmt.Fprintf(env.Out, "warning: %s\n", n)
		}
		return nil, dir.UpdateRun(func(r *results.Run) {
			r.Hosts = append(r.Hosts, rec)
			r.Notes = append(r.Notes, notes...)
		})
	}
	if h.NodeExporterURL("") == "" {
		rec.Telemetry = "not read: node_exporter = " + fleet.NodeExporterOff
		return record()
	}
	// The exporter is at the host's address (its address setting, else the
	// host name ssh resolves its destination to) unless node_exporter names
	// another.
	addr := ""
	if e := strings.TrimSpace(h.NodeExporter); e == "" || strings.HasPrefix(e, ":") {
		if addr, err = sh.Shell.ServerAddress(ctx, h); err != nil {
			rec.Telemetry = "node exporter not found: " + err.Error()
			notes = append(notes, fmt.Sprintf("%v: the run goes on without the server host's CPU and disk figures; give the host's address, or its exporter's (--node-exporter, or node_exporter in the host's [[host]] table)", err))
			return record()
		}
	}
	url := h.NodeExporterURL(addr)
	rec.NodeExporter = url
	devices, err := sh.Shell.TargetDevices(ctx, h, sh.Target)
	switch {
	case err != nil:
		notes = append(notes, fmt.Sprintf("host %s: %v: no disk figures of the server's host, its CPU is still read (check that ssh reaches it)", h.Name, err))
	case len(devices) == 0:
		notes = append(notes, fmt.Sprintf("host %s: no block device behind %s (a file system without one): no disk figures of the server's host", h.Name, sh.Target))
	}
	rec.Devices = devices
	exp, more, err := telemetry.OpenExporter(ctx, h.Name, telemetry.ExporterOptions{URL: url, Devices: devices})
	notes = append(notes, more...)
	if err != nil {
		rec.Telemetry = "node exporter unreachable: " + err.Error()
		notes = append(notes, fmt.Sprintf("host %s: its node exporter cannot be read (%v): the run goes on without the server host's CPU and disk figures; install prometheus-node-exporter there, or give its address (--node-exporter, or node_exporter in the host's [[host]] table)", h.Name, err))
		return record()
	}
	fmt.Fprintf(env.Out, "server host %s: node exporter %s read once a second%s\n", h.Name, url, devicesNamed(devices))
	if _, err := record(); err != nil {
		return nil, err
	}
	return []telemetry.RemoteHost{{Name: h.Name, Exporter: exp}}, nil
}

func devicesNamed(devices []string) string {
	if len(devices) == 0 {
		return ""
	}
	return " (disks " + strings.Join(devices, ", ") + ")"
}
