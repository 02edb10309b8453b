package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/results"
)

// Database time by class: pg_stat_activity sampled ten times a second (by
// server.Activity) on a connection of its own, each session counted in the
// class of the wait it is in (waitClassifier).

// activityQuery counts the sessions that make database time, by wait: the
// benchmark's backends (and their parallel workers) in dbio's database
// while they run a statement and, when writers is set, the server's own
// writers while they work. A writer waiting in its main loop (Activity) or
// in a pause it takes on purpose (Timeout: a spread checkpoint's
// CheckpointWriteDelay, autovacuum's cost-based VacuumDelay) is idle, not
// database time. The sampler's own session is left out.
func activityQuery(writers bool) string {
	q := `SELECT wait_event_type, wait_event, count(*)
FROM pg_stat_activity
WHERE pid <> pg_backend_pid()
  AND (backend_type IN ('client backend', 'parallel worker') AND datname = current_database() AND state = 'active'`
	if writers {
		q += `
    OR backend_type IN ('walwriter', 'checkpointer', 'background writer', 'autovacuum worker')
      AND wait_event_type IS DISTINCT FROM 'Activity' AND wait_event_type IS DISTINCT FROM 'Timeout'`
	}
	return q + `)
GROUP BY 1, 2`
}

// activityStatement is the name activityQuery is prepared under.
const activityStatement = "dbio_db_time"

// dbTimeCounters are the counters of database time, in the classes' order.
func dbTimeCounters() []string {
	var names []string
	for _, c := range results.DBTimeClasses() {
		names = append(names, c.Counter())
	}
	return names
}

// startDBTime prepares the sampling of database time, which the first
// Stats starts, unless the environment turns it off (server.ActivityEnv);
// what the role cannot see is said in the instance's notes, or at once
// through o.Notice when the run has one. An instance whose role cannot be
// asked runs without database time, and says so.
func (in *Instance) startDBTime(ctx context.Context, o engine.Options) {
	if server.ActivityOff(o.Getenv) {
		in.Facts.Notes = append(in.Facts.Notes, "database time was not sampled ("+server.ActivityEnv+"=off)")
		return
	}
	writers, note, err := dbTimeVisibility(ctx, in.StatsDB())
	if err != nil {
		note = "database time was not sampled: what the role may see of the server's sessions could not be read: " + err.Error()
	}
	switch {
	case note != "" && o.Notice != nil:
		o.Notice("warning: " + note)
	case note != "":
		in.Facts.Notes = append(in.Facts.Notes, note)
	}
	if err == nil {
		in.dbTime, in.dbTimeWriters = newDBTime(in.DSN(), writers, o.Notice), writers
	}
}

// newDBTime returns the sampler of database time of the database dsn
// reaches; writers says whether the server's own writers are sampled too.
func newDBTime(dsn string, writers bool, notice func(string)) *server.Activity {
	query := activityQuery(writers)
	return server.NewActivity(dbTimeCounters(), func(ctx context.Context) (server.ActivityProbe, error) {
		p, err := connectActivityProbe(ctx, dsn, query)
		if err != nil {
			return nil, err // not a nil *activityProbe in a non-nil interface
		}
		return p, nil
	}, notice)
}

// activityProbe samples pg_stat_activity on a connection of its own.
type activityProbe struct {
	conn     *pgconn.PgConn
	classify waitClassifier
	// index maps a class to its place in the counters.
	index map[results.DBTimeClass]int
	// formats ask for the wait's names as text and the count in binary,
	// so that a sample allocates no strings.
	formats []int16
}

func connectActivityProbe(ctx context.Context, dsn, query string) (*activityProbe, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = "dbio-db-time"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Prepare(ctx, activityStatement, query, nil); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prepare the query of pg_stat_activity: %w", err)
	}
	p := &activityProbe{conn: conn, classify: newWaitClassifier(), index: map[results.DBTimeClass]int{},
		formats: []int16{pgtype.TextFormatCode, pgtype.TextFormatCode, pgtype.BinaryFormatCode}}
	for i, c := range results.DBTimeClasses() {
		p.index[c] = i
	}
	return p, nil
}

// Sample implements server.ActivityProbe.
func (p *activityProbe) Sample(ctx context.Context, sessions []float64) error {
	rr := p.conn.ExecPrepared(ctx, activityStatement, nil, nil, p.formats)
	for rr.NextRow() {
		v := rr.Values()
		if len(v) != 3 || len(v[2]) != 8 {
			continue
		}
		n := int64(binary.BigEndian.Uint64(v[2]))
		sessions[p.index[p.classify.class(v[0], v[1])]] += float64(n)
	}
	_, err := rr.Close()
	return err
}

// Close implements server.ActivityProbe.
func (p *activityProbe) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), server.ActivityInterval)
	defer cancel()
	p.conn.Close(ctx)
}

// dbTimeVisibility reads whether dbio's role sees the waits of the
// server's writers (pg_read_all_stats, which a superuser has) and says
// what database time lacks when it does not: the waits of other roles'
// sessions and of the server's own processes read as NULL without it.
func dbTimeVisibility(ctx context.Context, db *sql.DB) (writers bool, note string, err error) {
	var role string
	if err := db.QueryRowContext(ctx, "SELECT current_user, pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')").Scan(&role, &writers); err != nil {
		return false, "", err
	}
	if writers {
		return true, "", nil
	}
	return false, fmt.Sprintf("database time leaves out the server's own writers (WAL writer, checkpointer, background writer, autovacuum): the role %s may not read their waits in pg_stat_activity; GRANT pg_read_all_stats TO %s to count them", role, quoteIdent(role)), nil
}

// waitClassifier puts a wait of pg_stat_activity (its wait_event_type and
// wait_event) into its class of database time. Names are matched without
// regard to case: PostgreSQL 17 generates them from its list of events and
// spells some differently from 16 (WalSync for WALSync, SlruRead for
// SLRURead), the same events.
type waitClassifier struct {
	// events are the waits classed one by one, as "type:event" in lower case.
	events map[string]results.DBTimeClass
	// types class every other wait by its type, in lower case.
	types map[string]results.DBTimeClass
	// key is where a wait's lower-case key is built without allocating.
	key []byte
}

func newWaitClassifier() waitClassifier {
	w := waitClassifier{events: map[string]results.DBTimeClass{}, types: map[string]results.DBTimeClass{}, key: make([]byte, 0, 128)}
	for _, e := range classedWaits() {
		w.events[string(bytes.ToLower([]byte(e.typ+":"+e.event)))] = e.class
	}
	for typ, c := range map[string]results.DBTimeClass{
		// Heavyweight locks (rows, tables, advisory), internal locks, and
		// a buffer pinned by another session: waiting for others.
		"lock": results.DBTimeLock, "lwlock": results.DBTimeLock, "bufferpin": results.DBTimeLock,
		// Signals between processes, the client inside a statement (COPY
		// from the client), timeouts, extensions, a main loop.
		"ipc": results.DBTimeOther, "client": results.DBTimeOther, "timeout": results.DBTimeOther,
		"extension": results.DBTimeOther, "activity": results.DBTimeOther, "injectionpoint": results.DBTimeOther,
	} {
		w.types[typ] = c
	}
	return w
}

// class is the class of a wait; no wait at all is CPU (on a CPU, or
// waiting for one). It allocates nothing.
func (w *waitClassifier) class(typ, event []byte) results.DBTimeClass {
	if len(typ) == 0 {
		return results.DBTimeCPU
	}
	w.key = appendLower(append(appendLower(w.key[:0], typ), ':'), event)
	if c, ok := w.events[string(w.key)]; ok {
		return c
	}
	t := w.key[:len(typ)]
	if string(t) == "io" {
		// An I/O wait of a version newer than the list: by its name.
		ev := w.key[len(typ)+1:]
		switch {
		case bytes.Contains(ev, []byte("sync")) || bytes.Contains(ev, []byte("flush")):
			return results.DBTimeIOSync
		case bytes.Contains(ev, []byte("read")) || bytes.Contains(ev, []byte("prefetch")):
			return results.DBTimeIORead
		}
		return results.DBTimeIOWrite
	}
	if c, ok := w.types[string(t)]; ok {
		return c
	}
	return results.DBTimeOther
}

func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// classedWait is one wait classed on its own.
type classedWait struct {
	typ, event string
	class      results.DBTimeClass
}

// classedWaits are the waits classed one by one: every I/O wait of
// PostgreSQL 15, 16 and 17 (and those 18 adds), spelt as 16 spells them,
// and the few waits of other types that are storage or lock waits in
// disguise.
func classedWaits() []classedWait {
	var ws []classedWait
	add := func(typ string, c results.DBTimeClass, events ...string) {
		for _, e := range events {
			ws = append(ws, classedWait{typ, e, c})
		}
	}
	// Reading: data files, temporary files, the WAL (replication, recovery,
	// a new segment copied), SLRU pages (commit status), small files.
	add("IO", results.DBTimeIORead,
		"BaseBackupRead", "BufFileRead", "ControlFileRead", "CopyFileRead", "DataFilePrefetch", "DataFileRead",
		"LockFileAddToDataDirRead", "LockFileCreateRead", "LockFileReCheckDataDirRead", "RelationMapRead",
		"ReorderBufferRead", "ReorderLogicalMappingRead", "ReplicationSlotRead", "SLRURead", "SnapbuildRead",
		"TimelineHistoryRead", "TwophaseFileRead", "WALCopyRead", "WALRead", "WALSenderTimelineHistoryRead",
		// 17: the WAL summarizer's files.
		"WalSummaryRead",
		// 18: asynchronous I/O, which serves reads in 18.
		"AioIoCompletion", "AioIoUringExecution", "AioIoUringSubmit")
	// Writing (the system call, not its durability), extending and
	// truncating files, and filling shared memory's files.
	add("IO", results.DBTimeIOWrite,
		"BaseBackupWrite", "BufFileTruncate", "BufFileWrite", "ControlFileWrite", "ControlFileWriteUpdate",
		"CopyFileWrite", "DataFileExtend", "DataFileTruncate", "DataFileWrite", "DSMAllocate", "DSMFillZeroWrite",
		"LockFileAddToDataDirWrite", "LockFileCreateWrite", "LogicalRewriteMappingWrite", "LogicalRewriteTruncate",
		"LogicalRewriteWrite", "RelationMapWrite", "ReorderBufferWrite", "ReplicationSlotWrite", "SLRUWrite",
		"SnapbuildWrite", "TimelineHistoryFileWrite", "TimelineHistoryWrite", "TwophaseFileWrite", "VersionFileWrite",
		"WALBootstrapWrite", "WALCopyWrite", "WALInitWrite", "WALWrite",
		"WalSummaryWrite", // 17
		"CopyFileCopy")    // 18
	// Waiting for data to be durable: syncs and flushes of data files,
	// the WAL and everything else, and a relation map's durable
	// replacement (RelationMapSync before 16).
	add("IO", results.DBTimeIOSync,
		"BaseBackupSync", "ControlFileSync", "ControlFileSyncUpdate", "DataFileFlush", "DataFileImmediateSync",
		"DataFileSync", "LockFileAddToDataDirSync", "LockFileCreateSync", "LogicalRewriteCheckpointSync",
		"LogicalRewriteMappingSync", "LogicalRewriteSync", "RelationMapReplace", "RelationMapSync",
		"ReplicationSlotRestoreSync", "ReplicationSlotSync", "SLRUFlushSync", "SLRUSync", "SnapbuildSync",
		"TimelineHistoryFileSync", "TimelineHistorySync", "TwophaseFileSync", "VersionFileSync",
		"WALBootstrapSync", "WALCopySync", "WALInitSync", "WALSync", "WALSyncMethodAssign")
	// A session waiting for the lock on the WAL's writing (WALWriteLock
	// before 13) waits for another session's flush to cover its commit: a
	// group commit, the log sync seen from behind.
	add("LWLock", results.DBTimeIOSync, "WALWrite", "WALWriteLock")
	// A backend that must hand its file's sync to the checkpointer and
	// finds the queue full waits for the checkpointer's syncs.
	add("Timeout", results.DBTimeIOSync, "RegisterSyncRequest")
	// Waiting for another session's read (or write) of the same page.
	add("IPC", results.DBTimeIORead, "BufferIO")
	// A contended spinlock, and vacuum waiting for a table's lock.
	add("Timeout", results.DBTimeLock, "SpinDelay", "VacuumTruncate")
	return ws
}
