package telemetry

import (
	"strings"
)

// Verdict names what limited a step, with the figures that say so.
type Verdict struct {
	// Kind is one of "io", "cpu", "steal", "balanced", "none", "unknown".
	Kind string `json:"kind"`
	// Text is the verdict for a reader: "I/O bound: iowait 38 %, vda
	// utilization 97 %, p99 write latency 7.05 ms".
	Text string `json:"text"`
	// Evidence holds the figures the verdict used, keyed by metric name;
	// step means, or p99 where the key ends in _p99.
	Evidence map[string]float64 `json:"evidence,omitempty"`
}

// Verdict kinds.
const (
	KindIO       = "io"       // storage is the bottleneck
	KindCPU      = "cpu"      // the CPUs are saturated with work
	KindSteal    = "steal"    // the CPUs are saturated because the hypervisor takes them
	KindBalanced = "balanced" // CPU and storage are both close to their limits
	KindNone     = "none"     // neither is: the limit is elsewhere
	KindUnknown  = "unknown"  // nothing was sampled
)

// Signals are the step figures a verdict is drawn from: means over the
// step's per-second samples, except the latency percentiles.
type Signals struct {
	Samples int
	HasCPU  bool
	// IdlePct, IOWaitPct and StealPct are shares of the whole machine.
	IdlePct, IOWaitPct, StealPct float64
	// Device is the busiest watched device (highest mean utilization) as in
	// metric names, "" when no device is watched.
	Device string
	// UtilPct and QueueDepth are the busiest device's mean utilization and
	// queue depth; ReadP99Ms and WriteP99Ms the p99 of its per-second read
	// and write latencies (0 without reads or writes).
	UtilPct, QueueDepth   float64
	ReadP99Ms, WriteP99Ms float64
	HasReads, HasWrites   bool
	// HasPSI says /proc/pressure was read; the PSI shares are of wall time.
	HasPSI                                    bool
	PSIIOSomePct, PSIIOFullPct, PSICPUSomePct float64
	// DriverCPUPct is dbio's own share of the machine's CPU.
	DriverCPUPct float64
	// InProcessEngine says dbio's CPU includes the engine's (SQLite).
	InProcessEngine bool
}

// Thresholds are the lines a verdict draws, in %. They are deliberately
// coarse: a verdict names the dominant limit, the evidence lets a reader
// judge the rest.
type Thresholds struct {
	// CPUIdleBelow: the CPUs are saturated when mean idle is below it…
	CPUIdleBelow float64
	// IOWaitQuiet: …and iowait is below it (otherwise I/O is also a factor).
	IOWaitQuiet float64
	// StealAbove: a saturated CPU is blamed on the hypervisor from this steal.
	StealAbove float64
	// IOWaitAbove: a step is I/O bound from this mean iowait: that much of
	// the machine's CPU time had nothing to do but wait for the disk.
	IOWaitAbove float64
	// PSIIOFullAbove: a step is I/O bound when every non-idle task was
	// stalled on I/O for this share of the time.
	PSIIOFullAbove float64
	// UtilAbove: a step is I/O bound when the device is this busy and tasks
	// wait for it (IOWaitSupport iowait, or PSIIOSomeAbove I/O pressure).
	// Utilization alone proves little on SSDs, which serve many I/Os at once.
	UtilAbove, IOWaitSupport, PSIIOSomeAbove float64
	// BalancedIdleBelow: a step that is neither CPU nor I/O bound is
	// balanced when idle is below it and the device is at least
	// BalancedUtilAbove busy or iowait at least IOWaitQuiet.
	BalancedIdleBelow, BalancedUtilAbove float64
	// DriverAbove: a CPU-bound verdict points out a load generator using
	// this share of the CPU on the same machine.
	DriverAbove float64
}

// DefaultThresholds are the thresholds summaries use.
func DefaultThresholds() Thresholds {
	return Thresholds{
		CPUIdleBelow:      10,
		IOWaitQuiet:       5,
		StealAbove:        10,
		IOWaitAbove:       20,
		PSIIOFullAbove:    10,
		UtilAbove:         90,
		IOWaitSupport:     10,
		PSIIOSomeAbove:    30,
		BalancedIdleBelow: 25,
		BalancedUtilAbove: 70,
		DriverAbove:       10,
	}
}

// Judge draws the bottleneck verdict from a step's signals. Rules, in order:
//
//   - no samples or no CPU figures: unknown;
//   - I/O bound when iowait ≥ IOWaitAbove or I/O pressure "full" ≥
//     PSIIOFullAbove ("clear"), or when the busiest device is ≥ UtilAbove
//     utilized while iowait ≥ IOWaitSupport or I/O pressure "some" ≥
//     PSIIOSomeAbove ("busy") and the CPUs are not saturated;
//   - balanced when the CPUs are saturated (idle < CPUIdleBelow) and the
//     device is busy;
//   - CPU bound when idle < CPUIdleBelow and iowait < IOWaitQuiet, blamed on
//     the hypervisor (steal) when steal ≥ StealAbove;
//   - balanced when idle < BalancedIdleBelow and the device is ≥
//     BalancedUtilAbove utilized or iowait ≥ IOWaitQuiet;
//   - otherwise none: neither CPU nor storage is saturated.
func Judge(s Signals, t Thresholds) Verdict {
	if s.Samples == 0 || !s.HasCPU {
		return Verdict{Kind: KindUnknown, Text: "No CPU figures were sampled in this step, so no bottleneck can be named."}
	}
	v := Verdict{Evidence: map[string]float64{
		"cpu_idle_pct":   round6(s.IdlePct),
		"cpu_iowait_pct": round6(s.IOWaitPct),
		"cpu_steal_pct":  round6(s.StealPct),
	}}
	disk := s.Device != ""
	if disk {
		p := "disk_" + s.Device + "_"
		v.Evidence[p+"util_pct"] = round6(s.UtilPct)
		v.Evidence[p+"aqu"] = round6(s.QueueDepth)
		if s.HasReads {
			v.Evidence[p+"r_await_ms_p99"] = round6(s.ReadP99Ms)
		}
		if s.HasWrites {
			v.Evidence[p+"w_await_ms_p99"] = round6(s.WriteP99Ms)
		}
	}
	if s.HasPSI {
		v.Evidence["psi_io_some_pct"] = round6(s.PSIIOSomePct)
		v.Evidence["psi_io_full_pct"] = round6(s.PSIIOFullPct)
		v.Evidence["psi_cpu_some_pct"] = round6(s.PSICPUSomePct)
	}
	v.Evidence["proc_dbio_cpu_pct"] = round6(s.DriverCPUPct)

	// Unambiguous I/O signals first; a busy device with waiting tasks is
	// weaker evidence and shares the blame when the CPUs are saturated too.
	ioClear := s.IOWaitPct >= t.IOWaitAbove || (s.HasPSI && s.PSIIOFullPct >= t.PSIIOFullAbove)
	ioBusy := disk && s.UtilPct >= t.UtilAbove && (s.IOWaitPct >= t.IOWaitSupport || (s.HasPSI && s.PSIIOSomePct >= t.PSIIOSomeAbove))
	cpuSaturated := s.IdlePct < t.CPUIdleBelow
	ioBound := ioClear || (ioBusy && !cpuSaturated)
	cpuBound := cpuSaturated && !ioBusy && s.IOWaitPct < t.IOWaitQuiet
	balanced := (cpuSaturated && ioBusy) ||
		(s.IdlePct < t.BalancedIdleBelow && ((disk && s.UtilPct >= t.BalancedUtilAbove) || s.IOWaitPct >= t.IOWaitQuiet))

	var parts []string
	say := func(words ...string) { parts = append(parts, strings.Join(words, " ")) }
	sayDisk := func() {
		if !disk {
			return
		}
		say(s.Device, "utilization", pct(s.UtilPct))
		switch {
		case s.HasWrites && (!s.HasReads || s.WriteP99Ms >= s.ReadP99Ms):
			say("p99 write latency", sig3(s.WriteP99Ms), "ms")
		case s.HasReads:
			say("p99 read latency", sig3(s.ReadP99Ms), "ms")
		}
	}
	var head string
	switch {
	case ioBound:
		v.Kind, head = KindIO, "I/O bound"
		say("iowait", pct(s.IOWaitPct))
		if s.HasPSI {
			say("I/O pressure", pct(s.PSIIOSomePct))
		}
		sayDisk()
	case cpuBound && s.StealPct >= t.StealAbove:
		v.Kind, head = KindSteal, "CPU bound by the hypervisor"
		say("steal", pct(s.StealPct))
		say("idle", pct(s.IdlePct))
	case cpuBound:
		v.Kind, head = KindCPU, "CPU bound"
		say("idle", pct(s.IdlePct))
		say("iowait", pct(s.IOWaitPct))
		if s.HasPSI {
			say("CPU pressure", pct(s.PSICPUSomePct))
		}
	case balanced:
		v.Kind, head = KindBalanced, "CPU and storage both near their limits"
		say("idle", pct(s.IdlePct))
		say("iowait", pct(s.IOWaitPct))
		if s.HasPSI {
			say("I/O pressure", pct(s.PSIIOSomePct))
		}
		sayDisk()
	default:
		v.Kind, head = KindNone, "Neither CPU nor storage is saturated"
		say("idle", pct(s.IdlePct))
		say("iowait", pct(s.IOWaitPct))
		sayDisk()
	}
	v.Text = head + ": " + strings.Join(parts, ", ")
	switch {
	case v.Kind == KindNone:
		v.Text += "; the limit is elsewhere (concurrency, locks, think time, the network or the load generator)"
	case (v.Kind == KindCPU || v.Kind == KindBalanced) && !s.InProcessEngine && s.DriverCPUPct >= t.DriverAbove:
		v.Text += "; the load generator itself used " + pct(s.DriverCPUPct) + " of the CPU: run it on another host to load the server fully"
	}
	return v
}

// signalsFrom reads a step's verdict signals from its metric summaries.
func signalsFrom(m map[string]Stat, devices []string) Signals {
	var s Signals
	if idle, ok := m["cpu_idle_pct"]; ok {
		s.HasCPU = true
		s.IdlePct = idle.Mean
		s.IOWaitPct = m["cpu_iowait_pct"].Mean
		s.StealPct = m["cpu_steal_pct"].Mean
	}
	best := -1.0
	for _, d := range devices {
		u, ok := m["disk_"+d+"_util_pct"]
		if !ok || u.Mean <= best {
			continue
		}
		best = u.Mean
		s.Device, s.UtilPct = d, u.Mean
		s.QueueDepth = m["disk_"+d+"_aqu"].Mean
		r, hasR := m["disk_"+d+"_r_await_ms"]
		w, hasW := m["disk_"+d+"_w_await_ms"]
		s.ReadP99Ms, s.HasReads = r.P99, hasR
		s.WriteP99Ms, s.HasWrites = w.P99, hasW
	}
	if io, ok := m["psi_io_some_pct"]; ok {
		s.HasPSI = true
		s.PSIIOSomePct = io.Mean
		s.PSIIOFullPct = m["psi_io_full_pct"].Mean
		s.PSICPUSomePct = m["psi_cpu_some_pct"].Mean
	}
	s.DriverCPUPct = m["proc_dbio_cpu_pct"].Mean
	return s
}
