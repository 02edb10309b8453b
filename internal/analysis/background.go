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
	// Steps counts the steps it was read from.
	Steps int
}

// BackgroundOf reads a run's background from the telemetry of its database
// steps. fio points are left out: fio runs as dbio's child but is not
// counted in dbio's own CPU, so its work would read as somebody else's.
func BackgroundOf(r *Recorded) Background {
	var b Background
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
		b.Steps++
	}
	if b.Steps > 0 {
		b.OthersCPU /= float64(b.Steps)
		b.Steal /= float64(b.Steps)
	}
	return b
}

// backgroundGap is how far apart two runs' backgrounds may be, in % of the
// machine, before a comparison warns: below it, other processes' share is
// within what a quiet machine varies by.
const backgroundGap = 5

// backgroundWarning says when run b ran beside a different background from
// run a: other processes' CPU or steal more than backgroundGap points apart.
func backgroundWarning(whoA, whoB string, a, b Background) string {
	if a.Steps == 0 || b.Steps == 0 {
		return ""
	}
	if math.Abs(a.OthersCPU-b.OthersCPU) <= backgroundGap && math.Abs(a.Steal-b.Steal) <= backgroundGap {
		return ""
	}
	return fmt.Sprintf("%s and %s did not run on an equally quiet machine: other processes used %.0f %% and %.0f %% of the CPUs, steal was %.1f %% and %.1f %%; a difference between them may come from that alone",
		whoA, whoB, a.OthersCPU, b.OthersCPU, a.Steal, b.Steal)
}
