package analysis

import (
	"fmt"
	"math"

	"dbio/internal/results"
)

// A run shares its machine with whatever else runs there: other processes,
// and on a virtual machine the hypervisor's other guests (steal). Two runs
// whose backgrounds differ can differ for that alone, so a comparison says
// so beside its figures.

// Background is what else used the machine while a run's measured steps
// ran, as means over those steps in % of the machine.
type Background struct {
	// OthersCPU is the CPU busy (user + system) that was neither dbio's
	// nor the database server's.
	OthersCPU float64
	// Steal is the CPU time the hypervisor gave to other guests.
	Steal float64
	// Load is the kernel's 1-minute load average (tasks running, waiting
	// for a CPU or in uninterruptible sleep), the mean over the steps that
	// sampled it; NaN when none did (results written before dbio sampled it).
	// It counts the run's own tasks too: dbio's threads and the server's
	// processes.
	Load float64
	// CPUs is the number of CPUs the load is read against; 0 when unknown.
	CPUs int
	// Steps counts the steps it was read from.
	Steps int
}

// BackgroundOf reads a run's background from the telemetry of its database
// steps. fio points are left out: fio runs as dbio's child but is not
// counted in dbio's own CPU, so its work would read as somebody else's.
func BackgroundOf(r *Recorded) Background {
	b := Background{Load: math.NaN()}
	var load float64
	var loadSteps int
	var steps []results.Step
	for _, w := range r.Workloads {
		steps = append(steps, w.Steps...)
	}
	for _, s := range steps {
		t := s.Telemetry
		busy := t.Mean("cpu_user_pct") + t.Mean("cpu_system_pct")
		if math.IsNaN(busy) {
			continue
		}
		own := 0.0
		for _, p := range []string{"proc_dbio_cpu_pct", "proc_server_cpu_pct"} {
			if v := t.Mean(p); !math.IsNaN(v) {
				own += v
			}
		}
		b.OthersCPU += math.Max(busy-own, 0)
		if v := t.Mean("cpu_steal_pct"); !math.IsNaN(v) {
			b.Steal += v
		}
		if v := t.Mean("load_1m"); !math.IsNaN(v) {
			load += v
			loadSteps++
		}
		b.CPUs = max(b.CPUs, t.CPUs)
		b.Steps++
	}
	if b.Steps > 0 {
		b.OthersCPU /= float64(b.Steps)
		b.Steal /= float64(b.Steps)
	}
	if loadSteps > 0 {
		b.Load = load / float64(loadSteps)
	}
	return b
}

// backgroundGap is how far apart two runs' backgrounds may be, in % of the
// machine, before a comparison warns: below it, other processes' share is
// within what a quiet machine varies by.
const backgroundGap = 5

// backgroundWarning says when run b ran beside a different background from
// run a: other processes' CPU or steal more than backgroundGap points apart.
//
// The load average is quoted beside them but does not raise the warning by
// itself: it counts the run's own tasks, so a run on slower storage (more
// tasks in uninterruptible sleep) or with more users has a higher load with
// nobody else on the machine, and a gap in load alone says nothing about
// the background.
func backgroundWarning(whoA, whoB string, a, b Background) string {
	if a.Steps == 0 || b.Steps == 0 {
		return ""
	}
	if math.Abs(a.OthersCPU-b.OthersCPU) <= backgroundGap && math.Abs(a.Steal-b.Steal) <= backgroundGap {
		return ""
	}
	load := ""
	if !math.IsNaN(a.Load) && !math.IsNaN(b.Load) {
		load = fmt.Sprintf(", the load average was %.1f and %.1f (their own tasks included)", a.Load, b.Load)
	}
	return fmt.Sprintf("%s and %s did not run on an equally quiet machine: other processes used %.0f %% and %.0f %% of the CPUs, steal was %.1f %% and %.1f %%%s; a difference between them may come from that alone",
		whoA, whoB, a.OthersCPU, b.OthersCPU, a.Steal, b.Steal, load)
}
