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
	var exp *telemetry.Exporter
	var notes []string
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
	exp, notes = sh.Shell.WatchExporter(ctx, h, "", []string{sh.Target}, "--node-exporter, or node_exporter in the host's [[host]] table", &rec)
	if exp == nil {
		return record()
	}
	fmt.Fprintf(env.Out, "server host %s: node exporter %s read once a second%s\n", h.Name, rec.NodeExporter, devicesNamed(rec.Devices))
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
