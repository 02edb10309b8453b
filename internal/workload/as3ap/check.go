package as3ap

import (
	"context"
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/workload"
)

// Check implements workload.Workload: every relation still has its rows,
// and SUM(col_signed) of updates grew by exactly one per row that committed
// updates touched, so no committed update was lost and no rolled-back one
// left a trace. A commit whose answer was lost with the connection (counted
// as failed, yet applied) would also show here.
func (w *Workload) Check(ctx context.Context, inst engine.Instance) ([]workload.CheckResult, error) {
	db := inst.DB()
	var out []workload.CheckResult
	for _, t := range relations {
		var n, distinct int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT col_key) FROM "+t).Scan(&n, &distinct); err != nil {
			return out, fmt.Errorf("check %s: %w", t, err)
		}
		res := workload.CheckResult{Name: fmt.Sprintf("%s holds %d rows with distinct keys", t, w.cfg.Rows), Passed: n == int64(w.cfg.Rows) && distinct == n}
		if !res.Passed {
			res.Detail = fmt.Sprintf("%d rows, %d distinct keys", n, distinct)
		}
		out = append(out, res)
	}
	var sum int64
	if err := db.QueryRowContext(ctx, "SELECT SUM(col_signed) FROM updates").Scan(&sum); err != nil {
		return out, fmt.Errorf("check updates: %w", err)
	}
	w.mu.Lock()
	base := w.baseline
	w.mu.Unlock()
	inc := w.increments.Load()
	res := workload.CheckResult{Name: "updates.col_signed grew by one per committed row update", Passed: sum-base == inc,
		Detail: fmt.Sprintf("%d row updates committed", inc)}
	if !res.Passed {
		res.Detail = fmt.Sprintf("the sum grew by %d, but %d row updates committed", sum-base, inc)
	}
	return append(out, res), nil
}
