package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"dbio/internal/results"
)

// Conclude draws what a step's telemetry says from its metrics: the
// bottleneck verdict, and the CPU and memory of the load generator and of
// the server (when the server's processes were sampled). The producer of a
// step records the result, so that the stored summary reads on its own.
func Conclude(sum results.TelemetrySummary) results.TelemetrySummary {
	driver := "the load generator"
	if sum.InProcessEngine {
		driver = "dbio (load generator and in-process engine)"
	}
	sum.Driver = share(sum.Metrics, "dbio", driver, sum.CPUs)
	sum.Server = share(sum.Metrics, "server", "the database server", sum.CPUs)
	sum.CPU = cpuSplit(sum)
	sum.Verdict = Judge(signalsFrom(&sum), DefaultThresholds())
	return sum
}

// JudgeStep draws a step's verdict again, now with what the step asked of
// the database (LoadOf: its sessions, and whether they paced themselves),
// which Conclude, given the telemetry alone, cannot know: a step whose
// sessions spent most of their time outside the database is client-bound.
// The producer of a step calls it once the step's figures are in.
func JudgeStep(s *results.Step) {
	if s.Telemetry == nil {
		return
	}
	sig := signalsFrom(s.Telemetry)
	load := LoadOf(*s)
	sig.Load = &load
	s.Telemetry.Verdict = Judge(sig, DefaultThresholds())
}

// Load is what a step asked of the database.
type Load struct {
	// Sessions are the connections its users held: one per user, or the
	// transaction monitor's pool when terminals shared one.
	Sessions int
	// Paced says the users paced themselves: open loop on a schedule, or
	// terminals keying and thinking (Terminals).
	Paced, Terminals bool
	// OfferedTPS is the rate the schedule offered; Short says the step fell
	// short of it (RateShort).
	OfferedTPS float64
	Short      bool
}

// LoadOf is what a step asked of the database.
func LoadOf(s results.Step) Load {
	l := Load{Sessions: s.Users}
	if p := s.Pacing; p != nil {
		l.Paced, l.Terminals, l.OfferedTPS, l.Short = true, s.Terminals(), p.OfferedTPS, RateShort(s)
		if p.Connections > 0 {
			l.Sessions = p.Connections
		}
	}
	return l
}

// cpuSplit is whose the CPUs were over the step, from the step means of
// the per-second shares; nil without other processes' CPU (a run recorded
// before it was sampled, a host read through its node exporter).
func cpuSplit(sum results.TelemetrySummary) *results.CPUSplit {
	m := sum.Metrics
	other, ok := m[results.MetricOtherCPU]
	if !ok || other.Samples == 0 {
		return nil
	}
	c := &results.CPUSplit{Server: m["proc_server_cpu_pct"].Mean, DBIO: m["proc_dbio_cpu_pct"].Mean, Other: other.Mean,
		Idle: m["cpu_idle_pct"].Mean, IOWait: m["cpu_iowait_pct"].Mean, Steal: m["cpu_steal_pct"].Mean}
	var parts []string
	if _, ok := m["proc_server_cpu_pct"]; ok {
		parts = append(parts, "the server "+pct(c.Server))
	}
	dbio := "dbio "
	if sum.InProcessEngine {
		dbio = "dbio with its in-process engine "
	}
	parts = append(parts, dbio+pct(c.DBIO), "other processes "+pct(c.Other), "idle "+pct(c.Idle), "iowait "+pct(c.IOWait), "steal "+pct(c.Steal))
	c.Text = "the CPUs: " + strings.Join(parts, ", ")
	return c
}

// share builds a process group's Share from its metrics, nil without samples.
func share(m map[string]results.TelemetryStat, role, who string, cpus int) *results.Share {
	cpu, ok := m["proc_"+role+"_cpu_pct"]
	if !ok {
		return nil
	}
	sh := &results.Share{CPUPct: cpu.Mean, Cores: results.Round6(cpu.Mean * float64(cpus) / 100), RSSMB: m["proc_"+role+"_rss_mb"].Max}
	sh.Text = fmt.Sprintf("%s used %s of the CPU (%s of %d cores) and %s of memory",
		who, pct(sh.CPUPct), sig3(sh.Cores), cpus, megabytes(sh.RSSMB))
	return sh
}

// BusiestDevice is the watched block device with the highest mean
// utilization in the step, "" when none was sampled.
func BusiestDevice(t *results.TelemetrySummary) string {
	if t == nil {
		return ""
	}
	best, dev := -1.0, ""
	for _, d := range t.Devices {
		if u := t.Mean(DiskMetric(d, "util_pct")); !math.IsNaN(u) && u > best {
			best, dev = u, d
		}
	}
	return dev
}

// DiskMetric names a device's metric: DiskMetric("vda", "w_await_ms") is disk_vda_w_await_ms.
func DiskMetric(device, what string) string { return "disk_" + device + "_" + what }

// pct formats a percentage for a sentence: "38 %", "0.4 %".
func pct(v float64) string {
	if v > 0 && v < 1 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " %"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " %"
}

// sig3 formats with three significant digits: 7.05, 0.92, 1.61, 38.2.
func sig3(v float64) string {
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func megabytes(mb float64) string {
	if mb >= 1000 {
		return sig3(mb/1000) + " GB"
	}
	return sig3(mb) + " MB"
}

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
	// DriverCPUPct is dbio's own share of the machine's CPU; ServerCPUPct
	// the server's (HasServer: its processes were sampled).
	DriverCPUPct, ServerCPUPct float64
	HasServer                  bool
	// InProcessEngine says dbio's CPU includes the engine's (SQLite).
	InProcessEngine bool
	// ServerUnknown says the server's CPU could not be seen (the user's
	// server, elsewhere): unknown, not zero.
	ServerUnknown bool
	// CPUs is the number of online CPUs.
	CPUs int
	// Split is whose the CPUs were; nil where other processes' CPU was not
	// sampled.
	Split *results.CPUSplit
	// DB is the database's own account of its time; nil without one.
	DB *DBTimeAccount
	// DBIOBlkioPct is the block-I/O delay of dbio's threads (SQLite's
	// among them), in % of one thread; HasDBIOBlkio says it was sampled.
	DBIOBlkioPct float64
	HasDBIOBlkio bool
	// Caps are the use of the storage's caps (--limit).
	Caps []CapUse
	// Memory is the server's memory cap (--server-memory); nil without one.
	Memory *ServerMemory
	// WaitMsPerS are the milliseconds per second the database timed itself
	// waiting for each kind of I/O (results.DBWaitKind), for the kinds it
	// timed: they tell a class of database time apart (a log sync from a
	// data file sync).
	WaitMsPerS map[results.DBWaitKind]float64
	// Load is what the step asked of the database; nil where only the
	// telemetry is known (Conclude).
	Load *Load
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

// Judge draws the bottleneck verdict from a step's signals: from the
// database's own account of its time where the engine gave one
// (judgeDatabase), from the kernel's account of dbio's threads for an
// engine inside dbio (judgeThreads), else from the OS's figures alone
// (judgeOS), which the verdict then says. Without samples or CPU figures
// no bottleneck is named. A step where other processes took more than a
// third of the CPUs says so, whatever limited it.
func Judge(s Signals, t Thresholds) results.Verdict {
	if s.Samples == 0 || !s.HasCPU {
		return results.Verdict{Kind: results.VerdictUnknown, Text: "No CPU figures were sampled in this step, so no bottleneck can be named."}
	}
	var v results.Verdict
	switch {
	case s.DB != nil:
		v = judgeDatabase(s, t)
	case s.InProcessEngine && s.HasDBIOBlkio:
		v = judgeThreads(s, t)
	default:
		v = judgeOS(s, t)
		v.Text += "; judged from the OS's view: the database gave no account of its time"
	}
	if c := s.Split; c != nil && c.Neighbours() {
		v.Text += "; other processes took " + pct(c.Other) + " of the CPUs: the step measured its neighbours as much as the database"
		v.Evidence[results.MetricOtherCPU] = results.Round6(c.Other)
	}
	return v
}

// judgeOS draws the verdict from the OS's figures alone, for a step
// without the database's account of its time. Rules, in order:
//
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
func judgeOS(s Signals, t Thresholds) results.Verdict {
	v := results.Verdict{Evidence: map[string]float64{
		"cpu_idle_pct":   results.Round6(s.IdlePct),
		"cpu_iowait_pct": results.Round6(s.IOWaitPct),
		"cpu_steal_pct":  results.Round6(s.StealPct),
	}}
	disk := s.Device != ""
	if disk {
		p := "disk_" + s.Device + "_"
		v.Evidence[p+"util_pct"] = results.Round6(s.UtilPct)
		v.Evidence[p+"aqu"] = results.Round6(s.QueueDepth)
		if s.HasReads {
			v.Evidence[p+"r_await_ms_p99"] = results.Round6(s.ReadP99Ms)
		}
		if s.HasWrites {
			v.Evidence[p+"w_await_ms_p99"] = results.Round6(s.WriteP99Ms)
		}
	}
	if s.HasPSI {
		v.Evidence["psi_io_some_pct"] = results.Round6(s.PSIIOSomePct)
		v.Evidence["psi_io_full_pct"] = results.Round6(s.PSIIOFullPct)
		v.Evidence["psi_cpu_some_pct"] = results.Round6(s.PSICPUSomePct)
	}
	v.Evidence["proc_dbio_cpu_pct"] = results.Round6(s.DriverCPUPct)

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
	// The figures each verdict quotes, in the order it quotes them.
	idle := func() { say("idle", pct(s.IdlePct)) }
	iowait := func() { say("iowait", pct(s.IOWaitPct)) }
	pressure := func(what string, v float64) {
		if s.HasPSI {
			say(what, "pressure", pct(v))
		}
	}
	var head string
	switch {
	case ioBound:
		v.Kind, head = results.VerdictIO, "I/O bound"
		iowait()
		pressure("I/O", s.PSIIOSomePct)
		sayDisk()
	case cpuBound && s.StealPct >= t.StealAbove:
		v.Kind, head = results.VerdictSteal, "CPU bound by the hypervisor"
		say("steal", pct(s.StealPct))
		idle()
	case cpuBound:
		v.Kind, head = results.VerdictCPU, "CPU bound"
		idle()
		iowait()
		pressure("CPU", s.PSICPUSomePct)
	case balanced:
		v.Kind, head = results.VerdictBalanced, "CPU and storage both near their limits"
		idle()
		iowait()
		pressure("I/O", s.PSIIOSomePct)
		sayDisk()
	default:
		v.Kind, head = results.VerdictNone, "Neither CPU nor storage is saturated"
		idle()
		iowait()
		sayDisk()
	}
	v.Text = head + ": " + strings.Join(parts, ", ")
	switch {
	case v.Kind == results.VerdictNone:
		v.Text += "; the limit is elsewhere (concurrency, locks, think time, the network or the load generator)"
	case (v.Kind == results.VerdictCPU || v.Kind == results.VerdictBalanced) && !s.InProcessEngine && s.DriverCPUPct >= t.DriverAbove:
		v.Text += "; the load generator itself used " + pct(s.DriverCPUPct) + " of the CPU: run it on another host to load the server fully"
	}
	return v
}

// signalsFrom reads a step's verdict signals from its metric summaries.
func signalsFrom(t *results.TelemetrySummary) Signals {
	m := t.Metrics
	s := Signals{Samples: t.Samples, InProcessEngine: t.InProcessEngine, ServerUnknown: t.ServerUnknown}
	if idle, ok := m["cpu_idle_pct"]; ok {
		s.HasCPU = true
		s.IdlePct = idle.Mean
		s.IOWaitPct = m["cpu_iowait_pct"].Mean
		s.StealPct = m["cpu_steal_pct"].Mean
	}
	if d := BusiestDevice(t); d != "" {
		s.Device, s.UtilPct = d, m[DiskMetric(d, "util_pct")].Mean
		s.QueueDepth = m[DiskMetric(d, "aqu")].Mean
		r, hasR := m[DiskMetric(d, "r_await_ms")]
		w, hasW := m[DiskMetric(d, "w_await_ms")]
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
	if srv, ok := m["proc_server_cpu_pct"]; ok {
		s.HasServer, s.ServerCPUPct = true, srv.Mean
	}
	s.CPUs, s.Split = t.CPUs, t.CPU
	if a, ok := DBTimeOf(t); ok {
		s.DB = &a
	}
	if d, ok := m[results.MetricDBIOBlkioWait]; ok && d.Samples > 0 {
		s.HasDBIOBlkio, s.DBIOBlkioPct = true, d.Mean
	}
	s.Caps = CapsOf(t)
	if mem, ok := serverMemoryOf(t); ok {
		s.Memory = &mem
	}
	for _, k := range results.DBWaitKinds() {
		if _, wait := k.Rates(); !math.IsNaN(t.Mean(wait)) {
			if s.WaitMsPerS == nil {
				s.WaitMsPerS = map[results.DBWaitKind]float64{}
			}
			s.WaitMsPerS[k] = t.Mean(wait)
		}
	}
	return s
}
