package analysis

import (
	"math"

	"dbio/internal/results"
	"dbio/internal/units"
)

// CapUse is how a step used one of its storage's caps (--limit, a storage
// class): what the block-I/O group was served against it.
type CapUse struct {
	Kind results.IOCapKind
	// Cap is the cap in IOPS, or MB/s for the byte caps; NaN when the step
	// was served nothing to tell it from.
	Cap float64
	// Served is the mean served per second, in the cap's unit; UsedPct the
	// mean use of the cap in %.
	Served, UsedPct float64
	// AtCapPct is the share of the step's seconds served at least
	// results.IOCapBindingPct of the cap: the seconds it bound.
	AtCapPct float64
}

// Write says the cap is on writes.
func (c CapUse) Write() bool {
	return c.Kind == results.IOCapWriteIOPS || c.Kind == results.IOCapWriteBPS
}

// Bytes says the cap is on bytes per second, not I/Os.
func (c CapUse) Bytes() bool {
	return c.Kind == results.IOCapReadBPS || c.Kind == results.IOCapWriteBPS
}

// Title names the cap with its value: "the 300 write IOPS cap", "the 50
// MB/s read cap".
func (c CapUse) Title() string {
	dir := "read"
	if c.Write() {
		dir = "write"
	}
	switch {
	case math.IsNaN(c.Cap):
		return "the " + dir + " cap"
	case c.Bytes():
		return "the " + sig3(c.Cap) + " MB/s " + dir + " cap"
	}
	return "the " + units.GroupThousands(int64(c.Cap)) + " " + dir + " IOPS cap"
}

// CapsOf is the use of each cap the step's storage had, in the order of
// results.IOCapKinds; none for a step without a --limit.
func CapsOf(t *results.TelemetrySummary) []CapUse {
	var out []CapUse
	for _, k := range results.IOCapKinds() {
		at := t.Mean(k.AtCap())
		if math.IsNaN(at) {
			continue
		}
		c := CapUse{Kind: k, Served: t.Mean(k.Served()), UsedPct: t.Mean(k.Used()), AtCapPct: at, Cap: math.NaN()}
		// Each second's use is its served over the same cap, so the
		// means keep their ratio.
		if c.UsedPct > 0 && !math.IsNaN(c.Served) {
			c.Cap = math.Round(100 * c.Served / c.UsedPct)
			if c.Bytes() {
				c.Cap = math.Round(1000*c.Served/c.UsedPct) / 10
			}
		}
		out = append(out, c)
	}
	return out
}

// mostBound is the cap on writes (or reads) that bound in the most
// seconds, false without one.
func mostBound(caps []CapUse, write bool) (CapUse, bool) {
	var best CapUse
	found := false
	for _, c := range caps {
		if c.Write() == write && (!found || c.AtCapPct > best.AtCapPct) {
			best, found = c, true
		}
	}
	return best, found
}

// RunCaps are the caps of a run's storage limit, in each cap's unit (IOPS,
// or MB/s for the byte caps), when every limited target had the same
// limit; nil without a limit, or with several. A step served nothing
// against a cap cannot tell its value (CapsOf); the run's record can.
func RunCaps(run results.Run) map[results.IOCapKind]float64 {
	var limit *results.StorageLimit
	for _, t := range run.Environment.Targets {
		switch {
		case t.Limit == nil:
		case limit == nil:
			limit = t.Limit
		case *limit != *t.Limit:
			return nil
		}
	}
	if limit == nil {
		return nil
	}
	out := map[results.IOCapKind]float64{}
	for k, v := range map[results.IOCapKind]float64{
		results.IOCapReadIOPS: float64(limit.ReadIOPS), results.IOCapWriteIOPS: float64(limit.WriteIOPS),
		results.IOCapReadBPS: float64(limit.ReadBPS) / 1e6, results.IOCapWriteBPS: float64(limit.WriteBPS) / 1e6,
	} {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}
