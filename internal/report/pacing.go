package report

import (
	"math"
	"sort"
	"strings"

	"dbio/internal/analysis"
	"dbio/internal/results"
)

// What an open-loop run adds to a workload's section: the offered and
// achieved rates, the latency from the intended start beside the service
// time, and, for a latency goal search, the curve of rate against latency
// with the objective and the answer.

// latencyPicks are the latency statistics of a step table, in column order.
var latencyPicks = []struct {
	name string
	pick func(analysis.Latencies) float64
}{
	{"mean", func(l analysis.Latencies) float64 { return l.Mean }},
	{"p50", func(l analysis.Latencies) float64 { return l.P50 }},
	{"p95", func(l analysis.Latencies) float64 { return l.P95 }},
	{"p99", func(l analysis.Latencies) float64 { return l.P99 }},
	{"p99.9", func(l analysis.Latencies) float64 { return l.P999 }},
	{"max", func(l analysis.Latencies) float64 { return l.Max }},
}

// Column groups of an open-loop step table.
const (
	groupOffered   = "offered load"
	groupCorrected = "latency from intended start (ms)"
	groupService   = "service time (ms)"
)

// pacedColumns are the columns an open-loop step table adds before its
// latency: offered and achieved rates and late starts, then the latency
// from the intended start.
func pacedColumns() []column {
	cols := []column{{Name: "offered (tx/s)", Numeric: true, Group: groupOffered}, {Name: "achieved (tx/s)", Numeric: true, Group: groupOffered},
		{Name: "late", Numeric: true, Group: groupOffered}}
	for _, p := range latencyPicks {
		cols = append(cols, column{Name: p.name, Numeric: true, Group: groupCorrected})
	}
	return cols
}

// pacedCells are a step's cells under pacedColumns.
func pacedCells(s results.Step) []cell {
	var row []cell
	if p := s.Pacing; p != nil {
		achieved := numCell(p.AchievedTPS, quantity)
		if analysis.RateShort(s) {
			achieved.Class = "worse"
		}
		late := numCell(float64(p.Late), thousands)
		if p.Late > 0 {
			late.Class = "worse"
		}
		row = append(row, numCell(p.OfferedTPS, quantity), achieved, late)
	} else {
		row = append(row, numCell(math.NaN(), quantity), numCell(math.NaN(), quantity), numCell(math.NaN(), thousands))
	}
	l, ok := analysis.CorrectedLatency(s)
	for _, p := range latencyPicks {
		v := math.NaN()
		if ok {
			v = p.pick(l)
		}
		row = append(row, numCell(v, millis))
	}
	return row
}

// correctedChart plots the p50 and p99 from the intended start beside the
// service time's, against the users.
func correctedChart(id string, steps []results.Step) *chart {
	corr := func(pick func(analysis.Latencies) float64) func(results.Step) float64 {
		return func(s results.Step) float64 {
			l, ok := analysis.CorrectedLatency(s)
			if !ok {
				return math.NaN()
			}
			return pick(l)
		}
	}
	svc := func(pick func(analysis.Latencies) float64) func(results.Step) float64 {
		return func(s results.Step) float64 { return latencyMS(s, pick) }
	}
	p50 := func(l analysis.Latencies) float64 { return l.P50 }
	p99 := func(l analysis.Latencies) float64 { return l.P99 }
	c := usersChart(id, "Latency from the intended start and service time vs virtual users", analysis.CorrectedNote,
		steps, axis{Label: "latency", Unit: "ms", Zero: true}, []lineSpec{
			{name: "p50 from intended start", value: corr(p50), color: 0},
			{name: "p99 from intended start", value: corr(p99), color: 2},
			{name: "p50 service", value: svc(p50), color: 0, dash: dashed},
			{name: "p99 service", value: svc(p99), color: 2, dash: dashed},
		})
	autoLog(c)
	return c
}

// pacedTimeline plots the offered and achieved rates second by second.
func (r *runView) pacedTimeline(id string, steps []results.Step) *chart {
	return r.timelineChart(id, "Offered and achieved rate per second",
		"The rate the schedule offered and the rate of scheduled transactions that finished, each second; where the achieved line falls below the offered one, the database or the users fell behind.",
		steps, axis{Label: "rate", Unit: "tx/s", Zero: true}, []tlSpec{
			{name: "offered", column: results.SeriesOfferedTPS, color: 7, dash: dashed},
			{name: "achieved", column: results.SeriesAchievedTPS, color: 0},
		}, usersLabel)
}

// goalSection is the search's curve of rate against latency with its
// objective, every probe, and the answer.
func goalSection(r *runView, steps []results.Step, id func(string) string) *section {
	g := r.Run.Goal
	sec := &section{ID: id("goal"), Title: "Latency goal search"}
	sec.add(&paragraph{Text: analysis.GoalAnswer(g), Class: "verdict"})
	byIndex := map[int]results.Step{}
	for _, s := range steps {
		byIndex[s.Index] = s
	}
	// The curve, in rate order.
	probes := append([]results.GoalProbe(nil), g.Probes...)
	sort.SliceStable(probes, func(i, j int) bool { return probes[i].OfferedTPS < probes[j].OfferedTPS })
	stat := g.Stat + " from intended start"
	c := &chart{ID: id("goal-curve"), Title: strings.TrimSpace(g.Stat+goalWho(g)) + " from the intended start vs offered rate",
		Note: "Each point is one probe, a step run open loop at the offered rate; the objective's statistic is read from the latency from each transaction's intended start. The dashed line is the objective: the answer is the highest rate whose point lies under it while the rate was achieved.",
		X:    axis{Label: "offered rate", Unit: "tx/s", Zero: true}, Y: axis{Label: "latency", Unit: "ms", Zero: true}}
	measured := series{Name: stat, Color: 2}
	service := series{Name: g.Stat + " service time", Color: 0, Dash: dashed}
	limit := series{Name: "objective", Color: 7, Dash: dashed}
	hasService := false
	for _, p := range probes {
		v := math.NaN()
		if p.MeasuredMS != nil {
			v = *p.MeasuredMS
		}
		measured.X, measured.Y = append(measured.X, p.OfferedTPS), append(measured.Y, v)
		sv := serviceStat(byIndex[p.Index], g)
		hasService = hasService || !math.IsNaN(sv)
		service.X, service.Y = append(service.X, p.OfferedTPS), append(service.Y, sv)
	}
	if n := len(probes); n > 0 {
		limit.X = []float64{probes[0].OfferedTPS, probes[n-1].OfferedTPS}
		limit.Y = []float64{g.LimitMS, g.LimitMS}
	}
	c.Series = append(c.Series, measured)
	if hasService {
		c.Series = append(c.Series, service)
	}
	c.Series = append(c.Series, limit)
	for _, p := range probes {
		if p.Pass && p.OfferedTPS == g.RateTPS && p.MeasuredMS != nil && (g.Answer == results.GoalFound || g.Answer == results.GoalAtLeast) {
			c.Series = append(c.Series, series{Name: "answer: " + quantity(g.RateTPS) + " tx/s", Color: 3, X: []float64{p.OfferedTPS}, Y: []float64{*p.MeasuredMS}})
			break
		}
	}
	autoLog(c)
	sec.add(c)

	t := &table{ID: id("goal-probes"), Title: "Probes in the order they ran",
		Caption: "Each probe is a step of this run, open loop at the offered rate with " + plural(g.Users, "user", "users") + ". Measured is the objective's statistic from the intended start; a probe passes when its rate was achieved (within 5 %) and the objective met."}
	t.Columns = []column{{Name: "probe", Numeric: true}, {Name: "phase"}, {Name: "offered (tx/s)", Numeric: true}, {Name: "achieved (tx/s)", Numeric: true},
		{Name: "measured (ms)", Numeric: true}, {Name: "limit (ms)", Numeric: true}, {Name: "verdict"}, {Name: "step"}}
	for i, p := range g.Probes {
		v := math.NaN()
		if p.MeasuredMS != nil {
			v = *p.MeasuredMS
		}
		verdict := textCell(p.Reason)
		if !p.Pass {
			verdict.Class = "worse"
		}
		t.Rows = append(t.Rows, []cell{numCell(float64(i+1), thousands), textCell(p.Phase), numCell(p.OfferedTPS, quantity),
			numCell(p.AchievedTPS, quantity), numCell(v, millis), numCell(g.LimitMS, millis), verdict, textCell(p.Step)})
	}
	sec.add(t)
	return sec
}

// goalWho names the objective's transaction type in a title: " of new_order".
func goalWho(g *results.GoalSearch) string {
	if g.Tx == "" {
		return ""
	}
	return " of " + g.Tx
}

// serviceStat is the objective's statistic of a step's service time, where
// the step's summary records it (mean, p50, p95, p99, p99.9); NaN otherwise.
func serviceStat(s results.Step, g *results.GoalSearch) float64 {
	if s.Total == nil {
		return math.NaN()
	}
	l := s.Total.Latency
	if g.Tx != "" {
		found := false
		for _, tx := range s.Transactions {
			if tx.Name == g.Tx {
				l, found = tx.Latency, true
			}
		}
		if !found {
			return math.NaN()
		}
	}
	if l.Count == 0 {
		return math.NaN()
	}
	switch g.Stat {
	case "mean":
		return l.MeanUS / 1000
	case "p50":
		return float64(l.P50US) / 1000
	case "p95":
		return float64(l.P95US) / 1000
	case "p99":
		return float64(l.P99US) / 1000
	case "p99.9":
		return float64(l.P999US) / 1000
	}
	return math.NaN()
}

// stepKey is what tells a workload's steps apart in its tables and charts:
// their users, or, when every step ran the same users open loop (a goal
// search's probes), their offered rate.
type stepKey struct {
	column string
	axis   axis
	value  func(results.Step) float64
	format func(float64) string
	// vs replaces " vs virtual users" in a chart's title.
	vs string
}

func keyOf(steps []results.Step) stepKey {
	byRate := len(steps) > 1
	for _, s := range steps {
		byRate = byRate && s.Pacing != nil && s.Users == steps[0].Users
	}
	if !byRate {
		return stepKey{column: "users", axis: usersAxis(), value: func(s results.Step) float64 { return float64(s.Users) }, format: thousands, vs: " vs virtual users"}
	}
	return stepKey{column: "offered (tx/s)", axis: axis{Label: "offered rate", Unit: "tx/s", Zero: true},
		value: func(s results.Step) float64 { return s.Pacing.OfferedTPS }, format: quantity, vs: " vs offered rate"}
}

// cell is a step's key in a table.
func (k stepKey) cell(s results.Step) cell { return numCell(k.value(s), k.format) }
