package analysis

import (
	"math"
	"strings"

	"dbio/internal/results"
)

// DBTimeShare is one class of a step's database time.
type DBTimeShare struct {
	Class results.DBTimeClass
	// Sessions is the step mean of the sessions in the class
	// (db_aas_<class>): 1 is one session in it the whole time.
	Sessions float64
	// SharePct is the class's share of the step's database time, in %:
	// its sessions over all active sessions, both step means, so that a
	// busy second weighs more than a quiet one.
	SharePct float64
}

// DBTimeAccount is a step's database time as the database accounted for
// it: the mean active sessions, and how they split by class.
type DBTimeAccount struct {
	// Sessions is the step mean of the active sessions (db_aas).
	Sessions float64
	// Classes are the classes the engine accounts, in the order shown.
	Classes []DBTimeShare
}

// DBTimeOf is a step's database time by class; false when the step has no
// database account (an engine that gives none, SQLite, a run recorded
// before there was one).
func DBTimeOf(t *results.TelemetrySummary) (DBTimeAccount, bool) {
	total := t.Mean(results.MetricDBActiveSessions)
	if math.IsNaN(total) {
		return DBTimeAccount{}, false
	}
	a := DBTimeAccount{Sessions: total}
	for _, c := range results.DBTimeClasses() {
		v := t.Mean(c.Sessions())
		if math.IsNaN(v) {
			continue
		}
		sh := DBTimeShare{Class: c, Sessions: v}
		if total > 0 {
			sh.SharePct = 100 * v / total
		}
		a.Classes = append(a.Classes, sh)
	}
	return a, len(a.Classes) > 0
}

// Share is the class's share of database time in %, 0 when not accounted.
func (a DBTimeAccount) Share(c results.DBTimeClass) float64 {
	for _, s := range a.Classes {
		if s.Class == c {
			return s.SharePct
		}
	}
	return 0
}

// IOShare is the share of database time spent waiting on storage, in %.
func (a DBTimeAccount) IOShare() float64 {
	var t float64
	for _, s := range a.Classes {
		if s.Class.IO() {
			t += s.SharePct
		}
	}
	return t
}

// LargestIO is the storage class with the largest share, false without
// any time in one.
func (a DBTimeAccount) LargestIO() (DBTimeShare, bool) {
	var best DBTimeShare
	for _, s := range a.Classes {
		if s.Class.IO() && s.SharePct > best.SharePct {
			best = s
		}
	}
	return best, best.SharePct > 0
}

// DBTimeTitle names a class for a reader: "CPU", "data reads", "syncs".
func DBTimeTitle(c results.DBTimeClass) string {
	switch c {
	case results.DBTimeCPU:
		return "CPU"
	case results.DBTimeIORead:
		return "data reads"
	case results.DBTimeIOWrite:
		return "writes"
	case results.DBTimeIOSync:
		return "syncs"
	case results.DBTimeLock:
		return "locks"
	case results.DBTimeOther:
		return "other waits"
	}
	return string(c)
}

// DBTimeRecorded says whether any of the steps has a database account.
func DBTimeRecorded(steps []results.Step) bool {
	for _, s := range steps {
		if _, ok := DBTimeOf(s.Telemetry); ok {
			return true
		}
	}
	return false
}

// dbTimeFloor is the smallest share of database time, in %, that a change
// in % is computed from: a class under 1 % of the time is noise whose
// ratios mean nothing; the same floor holds the sessions, in hundredths.
const (
	dbTimeShareFloorPct = 1
	dbTimeSessionsFloor = 0.01
)

// DBTimeMetrics compare runs by the database's account of its time: the
// mean active sessions, and for each class its share of database time and
// its sessions. None of them is better higher or lower: a class's share
// says where the time went, not how well it went (a faster disk moves time
// from syncs to CPU); the throughput and response time say that.
// Ids db-time-<class>-pct, db-aas-<class> and db-aas.
func DBTimeMetrics() []Metric {
	out := []Metric{{ID: "db-aas", Title: "active sessions in the database", Unit: "sessions", Better: results.NeitherBetter, Floor: dbTimeSessionsFloor,
		Value: func(s results.Step) float64 { return s.Telemetry.Mean(results.MetricDBActiveSessions) }}}
	for _, c := range results.DBTimeClasses() {
		title := DBTimeTitle(c)
		out = append(out,
			Metric{ID: "db-time-" + dashed(string(c)) + "-pct", Title: "database time on " + title, Unit: "% of database time", Better: results.NeitherBetter, Floor: dbTimeShareFloorPct,
				Value: func(s results.Step) float64 {
					a, ok := DBTimeOf(s.Telemetry)
					if !ok || a.Sessions <= 0 {
						return math.NaN()
					}
					return a.Share(c)
				}},
			Metric{ID: "db-aas-" + dashed(string(c)), Title: "sessions on " + title, Unit: "sessions", Better: results.NeitherBetter, Floor: dbTimeSessionsFloor,
				Value: func(s results.Step) float64 { return s.Telemetry.Mean(c.Sessions()) }})
	}
	return out
}

// dashed writes a recorded name's underscores as dashes, as metric ids have them.
func dashed(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

// IsDBTimeMetric says a compared metric is one of DBTimeMetrics.
func IsDBTimeMetric(m Metric) bool {
	return m.ID == "db-aas" || strings.HasPrefix(m.ID, "db-aas-") || strings.HasPrefix(m.ID, "db-time-")
}
