package runner

import (
	"context"
	"fmt"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/results"
	"dbio/internal/vusers"
	"dbio/internal/workload"
)

// tenant is one database with its workload and users.
type tenant struct {
	Name     string
	Instance engine.Instance
	Workload workload.Workload
	Users    int
}

// load keeps every tenant's users running until stopped, and measures them.
type load struct {
	tenants []tenant
	cols    []*metrics.Collector
	users   *vusers.Group
	// lastTick is when the counts were last drained, for per-second rates.
	lastTick time.Time
}

// startLoad opens every tenant's sessions and starts its users.
func startLoad(ctx context.Context, tenants []tenant, now time.Time) (*load, error) {
	l := &load{tenants: tenants, lastTick: now}
	sets := make([]vusers.Users, 0, len(tenants))
	for _, t := range tenants {
		col := metrics.NewCollector(t.Workload.TxTypes())
		l.cols = append(l.cols, col)
		sets = append(sets, vusers.Users{
			N: t.Users,
			Open: func(ctx context.Context, u int) (vusers.Session, error) {
				s, err := t.Workload.NewSession(ctx, t.Instance, u, col.NewRecorder())
				if err != nil {
					return nil, fmt.Errorf("%s: %w", t.Name, err)
				}
				return s, nil
			},
			Lost:       func(err error) error { return fmt.Errorf("%s: %w", t.Name, err) },
			ShareProcs: sharesProcs(t.Workload, t.Instance),
		})
	}
	users, err := vusers.Start(ctx, sets...)
	if err != nil {
		return nil, err
	}
	l.users = users
	return l, nil
}

// lost delivers the error of a user that could not go on.
func (l *load) lost() <-chan error { return l.users.Lost() }

// reset starts a new measurement period for every tenant.
func (l *load) reset() {
	for _, c := range l.cols {
		c.Reset()
	}
}

// tick drains every tenant's interval counts and says how long the interval was.
func (l *load) tick(now time.Time) ([][]metrics.TxCounts, time.Duration) {
	out := make([][]metrics.TxCounts, len(l.cols))
	for i, c := range l.cols {
		out[i] = c.Tick()
	}
	elapsed := now.Sub(l.lastTick)
	l.lastTick = now
	return out, elapsed
}

// samples drains the interval and renders it as series values.
func (l *load) samples(now time.Time) []results.Sample {
	counts, elapsed := l.tick(now)
	return tenantSamples(l.tenants, counts, elapsed)
}

// totals are each tenant's counts since the last reset, as of the last tick.
func (l *load) totals() [][]metrics.TxCounts {
	out := make([][]metrics.TxCounts, len(l.cols))
	for i, c := range l.cols {
		out[i] = c.StepTotals()
	}
	return out
}

// finish stops the users, lets them complete the transaction in hand, and closes their sessions.
func (l *load) finish() { l.users.Stop() }

// tenantSamples are the per-second series values of every tenant's workload,
// prefixed with the tenant's name when there are several; elapsed is the real
// time since the previous sample.
func tenantSamples(tenants []tenant, intervals [][]metrics.TxCounts, elapsed time.Duration) []results.Sample {
	var out []results.Sample
	// With several tenants, the phase's throughput (each throughput figure
	// summed over them) comes first, under the figures' own names: a fleet
	// of noisy hosts adds up these columns, as a workload step's.
	sums := map[results.FigureName]float64{}
	var summed []results.FigureName
	var own []results.Sample
	for i, t := range tenants {
		if t.Users == 0 {
			continue
		}
		prefix := ""
		if len(tenants) > 1 {
			prefix = t.Name + "_"
		}
		for _, f := range workload.SecondFigures(t.Workload, intervals[i], elapsed) {
			own = append(own, results.Sample{Name: prefix + string(f.Name), Value: f.Value})
			if f.Name.Def().Throughput() {
				if _, ok := sums[f.Name]; !ok {
					summed = append(summed, f.Name)
				}
				sums[f.Name] += f.Value
			}
		}
	}
	if len(tenants) > 1 {
		for _, name := range summed {
			out = append(out, results.Sample{Name: string(name), Value: sums[name]})
		}
	}
	return append(out, own...)
}

// workloadStep summarizes one tenant's counts over a measured period as a results step.
func workloadStep(t tenant, counts []metrics.TxCounts, measured time.Duration) results.Step {
	s := results.Step{Kind: t.Workload.Name(), Users: t.Users, MeasureS: measured.Seconds(), Status: results.StatusCompleted}
	ws := workload.Summarize(t.Workload, counts, measured, t.Users)
	s.Figures = ws.Figures
	s.Transactions, s.Total = ws.Transactions, &ws.Total
	return s
}

// watchExits merges the exit channels of the tenants' servers.
func watchExits(tenants []tenant) <-chan error {
	out := make(chan error, len(tenants))
	for _, t := range tenants {
		e, ok := t.Instance.(engine.Exited)
		if !ok {
			continue
		}
		go func(name string, ch <-chan error) {
			if err, ok := <-ch; ok || err != nil {
				out <- fmt.Errorf("%w: %s: %v", ErrEngineExited, name, err)
			}
		}(t.Name, e.Exited())
	}
	return out
}
