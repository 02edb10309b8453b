package as3ap

import (
	"strconv"
	"sync"

	"dbio/internal/engine"
	"dbio/internal/workload"
	"dbio/internal/workload/txerr"
)

// dialect is how the AS3AP relations and statements reach one engine.
type dialect struct {
	// types maps the generic column types of schema.go to the engine's.
	types map[string]string
	// tableSuffix follows CREATE TABLE's closing parenthesis.
	tableSuffix string
	// placeholder writes the n-th (1-based) parameter; nil means "?".
	placeholder func(n int) string
	// beginWrite starts a transaction that writes (SQLite takes its write lock at once).
	beginWrite string
	// forUpdate locks the rows a batch reads before it updates them; empty
	// where the write transaction already excludes other writers (SQLite).
	forUpdate string
	// writeLock queues writers inside dbio where the engine admits one
	// writer at a time (SQLite); nil elsewhere.
	writeLock *sync.Mutex
	// analyze refreshes a relation's optimizer statistics after loading.
	analyze     func(table string) string
	loadWorkers int
	classify    txerr.Classifier
	notes       []string
}

var dialects = workload.NewPerEngine[func(engine.Instance) *dialect]("as3ap")

// registerDialect makes a dialect available for instances whose Info().Engine is name.
func registerDialect(name string, d func(engine.Instance) *dialect) { dialects.Register(name, d) }

func dialectFor(inst engine.Instance) (*dialect, error) {
	d, err := dialects.For(inst)
	if err != nil {
		return nil, err
	}
	return d(inst), nil
}

// bind writes a statement with the dialect's placeholders for its "?" marks.
func (d *dialect) bind(query string) string { return workload.Rebind(query, d.placeholder) }

// sqliteWriters holds one writer queue per SQLite database: SQLite admits one
// writer at a time, and a queue in dbio hands the lock over at once where
// SQLite's busy handler would sleep and retry.
var sqliteWriters sync.Map // DSN -> *sync.Mutex

func init() {
	registerDialect("sqlite", func(inst engine.Instance) *dialect {
		lock, _ := sqliteWriters.LoadOrStore(inst.DSN(), &sync.Mutex{})
		return &dialect{
			types: map[string]string{"int": "INTEGER", "float": "REAL", "double": "REAL", "decim": "NUMERIC(18,2)",
				"date": "DATE", "code": "CHAR(10)", "name": "CHAR(20)", "address": "VARCHAR(80)"},
			beginWrite:  "BEGIN IMMEDIATE",
			writeLock:   lock.(*sync.Mutex),
			analyze:     func(t string) string { return "ANALYZE " + t },
			loadWorkers: 1,
			classify:    txerr.For(inst),
			notes: []string{
				"SQLite writers serialized: batch jobs and interactive updates queue on one in-process lock per database (batch transactions start with BEGIN IMMEDIATE); interactive reads run concurrently on WAL snapshots. Interactive update latency includes the wait behind a batch.",
				"SQLite stores col_decim and col_double as REAL and col_date as text: its types, not AS3AP's.",
			},
		}
	})
	registerDialect("postgres", func(inst engine.Instance) *dialect {
		return &dialect{
			types: map[string]string{"int": "INTEGER", "float": "REAL", "double": "DOUBLE PRECISION", "decim": "NUMERIC(18,2)",
				"date": "DATE", "code": "CHAR(10)", "name": "CHAR(20)", "address": "VARCHAR(80)"},
			placeholder: func(n int) string { return "$" + strconv.Itoa(n) },
			beginWrite:  "BEGIN",
			forUpdate:   " FOR UPDATE",
			analyze:     func(t string) string { return "ANALYZE " + t },
			loadWorkers: 4,
			classify:    txerr.For(inst),
		}
	})
	mysql := func(inst engine.Instance) *dialect {
		return &dialect{
			types: map[string]string{"int": "INT", "float": "FLOAT", "double": "DOUBLE", "decim": "DECIMAL(18,2)",
				"date": "DATE", "code": "CHAR(10)", "name": "CHAR(20)", "address": "VARCHAR(80)"},
			tableSuffix: " ENGINE = InnoDB",
			beginWrite:  "BEGIN",
			forUpdate:   " FOR UPDATE",
			analyze:     func(t string) string { return "ANALYZE TABLE " + t },
			loadWorkers: 4,
			classify:    txerr.For(inst),
		}
	}
	registerDialect("mariadb", mysql)
	registerDialect("mysql", mysql)
}
