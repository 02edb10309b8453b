package workload

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// LoadRates are how fast a workload's data loads, in Unit a second, by
// engine name: measured by dbio itself loading it (the rate its "loaded
// ..." line prints), since a load's speed is the engine's and the
// loader's, not the disk's alone. Measured says where and how.
type LoadRates struct {
	Unit     string
	ByEngine map[string]float64
	Measured string
}

// engineAliases are the names an engine goes by beside its rate table's.
var engineAliases = map[string]string{"postgresql": "postgres", "mysql": "mariadb"}

// Estimate is the time to load amount Unit on engine, and how it was
// found; an engine the table lacks takes the slowest rate in it, so that
// the estimate errs long.
func (r LoadRates) Estimate(amount float64, engine string) (time.Duration, string) {
	name := strings.ToLower(engine)
	if a, ok := engineAliases[name]; ok {
		name = a
	}
	rate, ok := r.ByEngine[name]
	which := "on " + name
	if !ok {
		rate, which = math.Inf(1), "at the slowest engine's rate"
		for _, v := range r.ByEngine {
			rate = min(rate, v)
		}
	}
	if rate <= 0 || math.IsInf(rate, 1) {
		return 0, ""
	}
	d := time.Duration(amount / rate * float64(time.Second)).Round(time.Second)
	unit := r.Unit
	if amount == 1 {
		unit = strings.TrimSuffix(unit, "s") // "1 warehouse"
	}
	return max(d, time.Second), fmt.Sprintf("%s %s at %s %s/s %s (%s)", formatAmount(amount), unit, formatAmount(rate), r.Unit, which, r.Measured)
}

// formatAmount is a count with thousands separators, or a rate to two
// significant figures below ten.
func formatAmount(v float64) string {
	if v < 10 && v != math.Trunc(v) {
		return fmt.Sprintf("%.2g", v)
	}
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
