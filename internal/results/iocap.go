package results

// The block-I/O cgroup's own I/O stall, where the kernel keeps it (cgroup
// v2's io.pressure of the group capping a run's storage): the share of wall
// time some, and all, of the group's non-idle tasks were stalled on I/O,
// in %. The cap's queueing is part of it; cgroup v1 keeps no such figure.
const (
	MetricIOCapPressureSome = "iocap_pressure_some_pct"
	MetricIOCapPressureFull = "iocap_pressure_full_pct"
)
