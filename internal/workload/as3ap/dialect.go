package as3ap

import (
	"fmt"

	"dbio/internal/engine"
	"dbio/internal/workload/sqlclient"
)

// engineSQL is what AS3AP itself chooses per engine; the rest of the SQL
// comes from the engine's sqlclient dialect.
type engineSQL struct {
	// types maps the generic column types of data.go to the engine's.
	types map[string]string
	notes []string
}

// sqlFor returns AS3AP's choices for d's engine.
func sqlFor(d *sqlclient.Dialect) engineSQL {
	return sqlclient.ByEngine[engineSQL]{
		SQLite: engineSQL{
			types: map[string]string{"int": "INTEGER", "float": "REAL", "double": "REAL", "decim": "NUMERIC(18,2)",
				"date": "DATE", "code": "CHAR(10)", "name": "CHAR(20)", "address": "VARCHAR(80)"},
			notes: []string{
				"SQLite writers serialized: batch jobs and interactive updates queue on one in-process lock per database (batch transactions start with BEGIN IMMEDIATE); interactive reads run concurrently on WAL snapshots. Interactive update latency includes the wait behind a batch.",
				"SQLite stores col_decim and col_double as REAL and col_date as text: its types, not AS3AP's.",
			},
		},
		Postgres: engineSQL{
			types: map[string]string{"int": "INTEGER", "float": "REAL", "double": "DOUBLE PRECISION", "decim": "NUMERIC(18,2)",
				"date": "DATE", "code": "CHAR(10)", "name": "CHAR(20)", "address": "VARCHAR(80)"},
		},
		MySQL: engineSQL{
			types: map[string]string{"int": "INT", "float": "FLOAT", "double": "DOUBLE", "decim": "DECIMAL(18,2)",
				"date": "DATE", "code": "CHAR(10)", "name": "CHAR(20)", "address": "VARCHAR(80)"},
		},
	}.For(d)
}

// sqlDialects gives an instance's dialect; its writers queue the writes of
// the loader and the sessions to one SQLite database.
type sqlDialects struct{ writers sqlclient.Writers }

func (s *sqlDialects) dialect(inst engine.Instance) (*sqlclient.Dialect, error) {
	return sqlclient.For("as3ap", inst, &s.writers)
}

// EngineNotes describe how the engine's backend runs AS3AP, for the results.
func (w *Workload) EngineNotes(inst engine.Instance) []string {
	d, err := w.dialect(inst)
	if err != nil {
		return nil
	}
	notes := append([]string{fmt.Sprintf("as3ap: %d rows per relation; %d batch jobs reading and updating %d rows of updates per transaction; interactive users alternate at random between a one-row read of uniques and a one-row update of updates, with no think time",
		w.cfg.Rows, w.cfg.BatchJobs, w.cfg.BatchRows)}, sqlFor(d).notes...)
	if note := d.SocketsNote(); note != "" {
		notes = append(notes, note)
	}
	return notes
}
