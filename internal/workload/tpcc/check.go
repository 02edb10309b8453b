package tpcc

import (
	"context"
	"fmt"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/workload"
)

// consistency are the conditions of clause 3.3.2.1 to 3.3.2.4. Each query
// returns the number of warehouses or districts that violate the condition and
// one example, and reads along primary keys so that it takes seconds at scale.
var consistency = []struct {
	name, query string
}{
	{
		// 3.3.2.1: W_YTD = sum(D_YTD) for each warehouse. Money is compared to
		// the cent: SQLite keeps it in binary floating point.
		name: "1: W_YTD = sum(D_YTD)",
		query: `SELECT COUNT(*), MIN(w_id) FROM (
			SELECT w.w_id AS w_id FROM warehouse w JOIN district d ON d.d_w_id = w.w_id
			GROUP BY w.w_id, w.w_ytd HAVING ABS(w.w_ytd - SUM(d.d_ytd)) > 0.005) v`,
	},
	{
		// 3.3.2.2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district.
		name: "2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
		query: `SELECT COUNT(*), MIN(d_w_id * 100 + d_id) FROM (
			SELECT d.d_w_id AS d_w_id, d.d_id AS d_id FROM district d
			WHERE d.d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders o WHERE o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id)
			   OR d.d_next_o_id - 1 <> COALESCE((SELECT MAX(no_o_id) FROM new_order n WHERE n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id), d.d_next_o_id - 1)) v`,
	},
	{
		// 3.3.2.3: max(NO_O_ID) - min(NO_O_ID) + 1 = number of NEW-ORDER rows, for each district.
		name: "3: max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER)",
		query: `SELECT COUNT(*), MIN(no_w_id * 100 + no_d_id) FROM (
			SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id
			HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)) v`,
	},
	{
		// 3.3.2.4: sum(O_OL_CNT) = number of ORDER-LINE rows, for each district.
		name: "4: sum(O_OL_CNT) = count(ORDER-LINE)",
		query: `SELECT COUNT(*), MIN(w * 100 + d) FROM (
			SELECT o.o_w_id AS w, o.o_d_id AS d FROM
			  (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS n FROM orders GROUP BY o_w_id, o_d_id) o
			  JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l
			  ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
			WHERE o.n <> l.n) v`,
	},
}

// Check implements workload.Workload: the consistency conditions 1 to 4.
func (w *Workload) Check(ctx context.Context, inst engine.Instance) ([]workload.CheckResult, error) {
	db := inst.DB()
	out := make([]workload.CheckResult, 0, len(consistency))
	for _, c := range consistency {
		var bad int
		var example *int64
		if err := db.QueryRowContext(ctx, c.query).Scan(&bad, &example); err != nil {
			return out, fmt.Errorf("consistency condition %s: %w", c.name, err)
		}
		res := workload.CheckResult{Name: c.name, Passed: bad == 0}
		if bad > 0 && example != nil {
			what := "districts"
			where := fmt.Sprintf("warehouse %d district %d", *example/100, *example%100)
			if strings.HasPrefix(c.name, "1:") {
				what, where = "warehouses", fmt.Sprintf("warehouse %d", *example)
			}
			res.Detail = fmt.Sprintf("%d %s violate it, first %s", bad, what, where)
		}
		out = append(out, res)
	}
	return out, nil
}
