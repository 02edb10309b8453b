package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"dbio/internal/results"
	"dbio/internal/telemetry"
)

// WatchExporter prepares the reading of h's node exporter during a run:
// the block devices behind dirs on h (over ssh), and one read of the page.
// addr is the address this machine reaches h at, "" to ask ssh for it when
// the node_exporter setting needs one. setting names where the user sets
// the exporter, for the fix. What cannot be read is recorded in rec and
// returned as a warning naming its fix, with no exporter: a host whose
// telemetry cannot be read still runs.
func (s Shell) WatchExporter(ctx context.Context, h Host, addr string, dirs []string, setting string, rec *results.FleetHost) (*telemetry.Exporter, []string) {
	if h.NodeExporterURL("") == "" {
		rec.Telemetry = "not read: node_exporter = " + NodeExporterOff
		return nil, nil
	}
	var warnings []string
	// The exporter is at the host's address (its address setting, else the
	// host name ssh resolves its destination to) unless node_exporter names
	// another.
	if e := strings.TrimSpace(h.NodeExporter); addr == "" && (e == "" || strings.HasPrefix(e, ":")) {
		var err error
		if addr, err = s.ServerAddress(ctx, h); err != nil {
			rec.Telemetry = "node exporter not found: " + err.Error()
			return nil, []string{fmt.Sprintf("%v: the run goes on without host %s's CPU and disk figures; give the host's address, or its exporter's (%s)", err, h.Name, setting)}
		}
	}
	url := h.NodeExporterURL(addr)
	rec.NodeExporter = url
	var devices []string
	for _, dir := range dirs {
		devs, err := s.TargetDevices(ctx, h, dir)
		switch {
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("host %s: %v: no disk figures, its CPU is still read (check that ssh reaches it)", h.Name, err))
		case len(devs) == 0:
			warnings = append(warnings, fmt.Sprintf("host %s: no block device behind %s (a file system without one): no disk figures", h.Name, dir))
		}
		for _, d := range devs {
			if !slices.Contains(devices, d) {
				devices = append(devices, d)
			}
		}
	}
	rec.Devices = devices
	exp, more, err := telemetry.OpenExporter(ctx, h.Name, telemetry.ExporterOptions{URL: url, Devices: devices})
	warnings = append(warnings, more...)
	if err != nil {
		rec.Telemetry = "node exporter unreachable: " + err.Error()
		return nil, append(warnings, fmt.Sprintf("host %s: its node exporter cannot be read (%v): the run goes on without its CPU and disk figures; install prometheus-node-exporter there, or give its address (%s)", h.Name, err, setting))
	}
	return exp, warnings
}
