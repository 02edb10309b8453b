// Package grid places several hosts' per-second samples on one grid of
// one-second slots, the rule every fleet figure and timeline shares: the
// fio fleet's sums, the tenants' and the report's lines.
package grid

import (
	"math"
	"time"
)

// Slots numbers a host's seconds on the common clock: each second's
// slot is the whole number of seconds from origin it is nearest to (a
// host's second is matched with the others' less than half a second
// away). A tick is late, never early (a ticker that falls behind delivers
// the tick it owes, then keeps its schedule), so when two seconds fall in
// one slot the earlier is a late tick: it goes back to the slot before,
// its own, when that is free. Pushing the later one forward instead would
// shift every second after it, one late tick putting the rest of the
// host's series a second off the others'.
func Slots(times []time.Time, origin time.Time) []int {
	slots := make([]int, len(times))
	for j, t := range times {
		k := int(math.Round(t.Sub(origin).Seconds()))
		if j > 0 && k <= slots[j-1] {
			if k == slots[j-1] && (j == 1 || slots[j-2] < k-1) {
				slots[j-1] = k - 1
			} else {
				// Not a late tick's doing: keep the order.
				k = slots[j-1] + 1
			}
		}
		slots[j] = k
	}
	return slots
}
