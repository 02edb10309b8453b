package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"dbio/internal/engine/txerr"
)

// ClassifyError implements txerr.ErrorClassifier by SQLSTATE: 40P01
// deadlock, 40001 serialization failure, 55P03 lock not available and 23505
// unique violation (the retries of sysbench's pgsql driver) are run again;
// class 53 (insufficient resources: disk full, out of memory, too many
// connections), 58 and XX (system and internal errors) stop the database's
// work; 08 connection exceptions and 57P server shutdown lose the
// connection, as does a connection pgx has closed.
func (in *Instance) ClassifyError(err error) txerr.Class { return classify(err) }

// DiskFull implements txerr.FullDetector: SQLSTATE 53100 is PostgreSQL's
// disk_full, whatever the message around it says. A server that cannot
// write its WAL PANICs instead and its clients only see the connection end:
// then its log says why.
func (in *Instance) DiskFull(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "53100"
	}
	return classify(err) == txerr.Lost && in.LogSays("No space left on device")
}

func classify(err error) txerr.Class {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40P01" || pe.Code == "40001" || pe.Code == "55P03" || pe.Code == "23505":
			return txerr.Retry
		case strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "58") || strings.HasPrefix(pe.Code, "XX"):
			return txerr.Fatal
		case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P"):
			return txerr.Lost
		}
		return txerr.Failed
	}
	if txerr.LostConnection(err) || errors.Is(err, pgconn.ErrConnClosed) {
		return txerr.Lost
	}
	return txerr.Failed
}
