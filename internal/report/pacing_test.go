package report

import (
	"bytes"
	"strings"
	"testing"
)

// An open-loop run's terminal summary shows each percentile from the
// intended start beside the service time, says what the two are, and says
// plainly where the offered rate was not achieved; a goal search's ends
// with its answer. A closed-loop run's shows none of it.
func TestTerminalShowsOpenLoop(t *testing.T) {
	cases := []struct {
		run          string
		want, absent []string
	}{
		{"tpcc-paced-sqlite", []string{
			"offered/s  achieved/s  late  p50 corr  p50 svc  p95 corr  p95 svc  p99 corr  p99 svc",
			"316.33 SHORT",
			"Latencies in ms: corr from each transaction's intended start",
			"users-4: the offered rate was not achieved: 400 tx/s offered, 316.33 tx/s achieved (79.1 %)",
			"Transactions that started more than 10 ms after their intended start: 974 of 1641 (59.4 %) at users-1, 1587 of 1587 (100 %) at users-4.",
		}, []string{"goal:", "latency p99 corrected"}},
		{"tpcc-goal-postgres", []string{
			"rate-42.5 4 2,531",
			"goal:    Highest rate meeting p99 of new_order at most 50 ms: 40 tx/s with 4 users (p99 46.18 ms); 42.5 tx/s did not (p99 64.83 ms). Resolution: 10 % of the rate.",
		}, nil},
		{"tpcc-postgres", []string{"p50 ms p95 ms p99 ms errors"}, []string{"corr", "offered", "goal:", "server memory under its cap"}},
		// The memory group's figures per step, under the database's waits.
		{"tpcc-postgres-memory", []string{
			"server memory under its cap, MB",
			"step users cap peak page cache own refaults/s cap bound",
			"users-1 1 201 201 135 60 1645 yes",
			"users-4 4 201 201 123 71 1861 yes",
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.run, func(t *testing.T) {
			var b bytes.Buffer
			if err := Text(&b, load(t, c.run)[0], testOptions()); err != nil {
				t.Fatal(err)
			}
			// Columns are aligned: compare with single spaces.
			text := strings.Join(strings.Fields(b.String()), " ")
			for _, w := range c.want {
				if !strings.Contains(text, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("terminal summary does not say %q:\n%s", w, b.String())
				}
			}
			for _, a := range c.absent {
				if strings.Contains(text, a) {
					t.Errorf("terminal summary says %q:\n%s", a, b.String())
				}
			}
		})
	}
}
