package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	mysqldrv "github.com/go-sql-driver/mysql"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/results"
)

// Database time by class, MariaDB's way. The processlist is sampled ten
// times a second (by server.Activity) on a connection of its own: each
// session of dbio's database that runs a statement is active, and its
// state tells a commit waiting for the redo log's flush (io_sync) and a
// lock wait (lock) from the rest; the server's count of sessions waiting
// for a row lock moves that many of the rest to lock. Once a second, Stats
// adds what performance_schema timed of InnoDB's data files (reads,
// writes, syncs) and takes the reads out of the sessions' CPU: what is
// left of the active time is cpu.
//
// Background I/O (the page cleaner's writes and syncs, a checkpoint's
// syncs) is database time too, as PostgreSQL's writers are: it is counted
// in its class without being taken from the sessions' time, which it was
// not part of. performance_schema cannot tell whose a file wait was at a
// price a sampler may pay (its per-thread summary costs about 18 ms of
// the server's CPU per read at 150 connections), so the split is by kind:
// reads are the sessions', writes and syncs the background's.

// statsMarker begins every statement dbio's own counters are read with,
// so that the sampler does not count the statistics connection as a
// session of the benchmark.
const statsMarker = "/* dbio statistics */ "

// activityQuery is one sample: the processlist (SHOW PROCESSLIST is the
// cheapest form: information_schema.PROCESSLIST costs the server about
// five times more, and performance_schema.threads does not show the
// states a commit waits in), and the sessions waiting for a row lock now.
const activityQuery = statsMarker + "SHOW PROCESSLIST; " +
	"SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = '" + rowLockMetric + "'"

// rowLockMetric is InnoDB's count of the sessions waiting for a row lock,
// enabled by default. A row-lock wait shows no state of its own in the
// processlist, and Innodb_row_lock_time adds a wait only once it ends, so
// a long wait would count as CPU while it lasted.
const rowLockMetric = "lock_row_lock_current_waits"

// running are the commands of a session that runs a statement.
var running = map[string]bool{"Query": true, "Execute": true, "Prepare": true, "Fetch": true}

// stateClasses class the processlist's states, in lower case, that are
// waits; every other state of a running session is cpu.
var stateClasses = map[string]results.DBTimeClass{
	// A commit writing the redo log and waiting for its flush (MariaDB's
	// "Commit"; MySQL 8's "waiting for handler commit"). Since 10.6, a
	// MariaDB session whose commit joins another's group commit goes on
	// and waits for the flush only before it answers the client, in the
	// state it was in: "Updating status" after a statement, and "Starting
	// cleanup" (the COMMIT's last stage) in a procedure that commits
	// before it returns its results, as dbio's TPC-C procedures do. A
	// session passes through "Starting cleanup" at the end of every
	// statement too: on a TPC-C run with no commit waits at all
	// (innodb_flush_log_at_trx_commit=0) about 4 % of the active samples
	// were in it.
	"commit": results.DBTimeIOSync, "commit implicit": results.DBTimeIOSync,
	"updating status": results.DBTimeIOSync, "starting cleanup": results.DBTimeIOSync,
	"waiting for handler commit": results.DBTimeIOSync,
	// Table and server locks.
	"system lock": results.DBTimeLock, "table lock": results.DBTimeLock, "locked": results.DBTimeLock,
	"waiting for table flush": results.DBTimeLock,
	// The client inside a statement, a sleep asked for. ("Writing to net"
	// is not a wait here: MariaDB leaves it showing after a procedure's
	// result set is sent while the procedure goes on working.)
	"reading from net": results.DBTimeOther, "user sleep": results.DBTimeOther,
}

// stateClass is the class of a running session's state (lower case).
func stateClass(state []byte) results.DBTimeClass {
	if c, ok := stateClasses[string(state)]; ok {
		return c
	}
	if bytes.HasPrefix(state, []byte("waiting for ")) || bytes.HasPrefix(state, []byte("waiting on ")) {
		// Metadata, table, global read, backup and commit locks; every
		// other wait (a replica, a semi-synchronous acknowledgement, a
		// condition) is for something outside.
		if bytes.Contains(state, []byte("lock")) {
			return results.DBTimeLock
		}
		return results.DBTimeOther
	}
	return results.DBTimeCPU
}

// activityProbe samples the processlist on a connection of its own,
// without a database selected, so that it is not one of the sessions it
// counts.
type activityProbe struct {
	pool     *sql.DB
	conn     *sql.Conn
	database string
	index    map[results.DBTimeClass]int
	// cols receive a processlist row without allocating; db, command,
	// state and info are where those columns are in it.
	cols                     []sql.RawBytes
	dest                     []any
	db, command, state, info int
	lower                    []byte
}

func connectActivityProbe(ctx context.Context, cfg *mysqldrv.Config, database string) (*activityProbe, error) {
	c := cfg.Clone()
	c.DBName = ""
	c.MultiStatements = true
	c.Logger = quietLogger{}
	connector, err := mysqldrv.NewConnector(c)
	if err != nil {
		return nil, err
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(1)
	conn, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	p := &activityProbe{pool: pool, conn: conn, database: database, index: map[results.DBTimeClass]int{}, db: -1}
	for i, cl := range results.DBTimeClasses() {
		p.index[cl] = i
	}
	return p, nil
}

// columns finds the processlist's columns the first time (MariaDB has one
// more than MySQL).
func (p *activityProbe) columns(rows *sql.Rows) error {
	if p.db >= 0 {
		return nil
	}
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	at := map[string]int{}
	for i, n := range names {
		at[strings.ToLower(n)] = i
	}
	for _, c := range []struct {
		name string
		to   *int
	}{{"db", &p.db}, {"command", &p.command}, {"state", &p.state}, {"info", &p.info}} {
		i, ok := at[c.name]
		if !ok {
			return fmt.Errorf("SHOW PROCESSLIST has no %s column (it has %s)", c.name, strings.Join(names, ", "))
		}
		*c.to = i
	}
	p.cols = make([]sql.RawBytes, len(names))
	p.dest = make([]any, len(names))
	for i := range p.cols {
		p.dest[i] = &p.cols[i]
	}
	return nil
}

// Sample implements server.ActivityProbe.
func (p *activityProbe) Sample(ctx context.Context, sessions []float64) error {
	rows, err := p.conn.QueryContext(ctx, activityQuery)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := p.columns(rows); err != nil {
		return err
	}
	cpu, lock := p.index[results.DBTimeCPU], p.index[results.DBTimeLock]
	for rows.Next() {
		if err := rows.Scan(p.dest...); err != nil {
			return err
		}
		if string(p.cols[p.db]) != p.database || !running[string(p.cols[p.command])] ||
			bytes.HasPrefix(p.cols[p.info], []byte(statsMarker)) {
			continue
		}
		p.lower = appendLower(p.lower[:0], p.cols[p.state])
		sessions[p.index[stateClass(p.lower)]]++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !rows.NextResultSet() {
		return errors.New("no count of the row-lock waits after the processlist")
	}
	var waits float64
	if rows.Next() {
		if err := rows.Scan(&waits); err != nil {
			return err
		}
	}
	// A session waiting for a row lock shows the state of its statement
	// ("Updating", "Sending data"): it is among those counted as cpu.
	n := min(waits, sessions[cpu])
	sessions[cpu] -= n
	sessions[lock] += n
	return rows.Err()
}

// Close implements server.ActivityProbe.
func (p *activityProbe) Close() {
	p.conn.Close()
	p.pool.Close()
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

// dbTime is an instance's account of database time: the sampled classes
// and the file waits performance_schema timed, turned into the classes'
// cumulative counters.
type dbTime struct {
	activity *server.Activity

	mu sync.Mutex
	// sampled receives the sampler's seconds at each read.
	sampled map[string]float64
	// last are the timed waits' counters (ms) at the previous read;
	// timed their seconds since the account began, by kind.
	last  map[string]float64
	timed map[results.DBWaitKind]float64
	// cpu is the cpu counter as last reported: it never goes back.
	cpu float64
}

// timedKinds are the file waits read from performance_schema (readWaits).
var timedKinds = []results.DBWaitKind{results.DBWaitRead, results.DBWaitWrite, results.DBWaitDataSync, results.DBWaitLogWrite, results.DBWaitSync}

func newDBTime(cfg *mysqldrv.Config, database string, notice func(string)) *dbTime {
	var counters []string
	for _, c := range results.DBTimeClasses() {
		counters = append(counters, c.Counter())
	}
	connect := func(ctx context.Context) (server.ActivityProbe, error) {
		return connectActivityProbe(ctx, cfg, database)
	}
	return &dbTime{activity: server.NewActivity(counters, connect, notice), sampled: map[string]float64{},
		last: map[string]float64{}, timed: map[results.DBWaitKind]float64{}}
}

// read adds the classes' counters to m, which holds the server's other
// counters (the timed waits, Com_commit); the first call starts the
// sampling. While the sampler has no figure, it adds none.
func (d *dbTime) read(m map[string]float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.sampled)
	d.activity.Read(d.sampled)
	sampling := len(d.sampled) > 0
	for _, k := range timedKinds {
		_, name := k.Counters()
		v, ok := m[name]
		if !ok {
			continue
		}
		prev, seen := d.last[name]
		d.last[name] = v
		switch {
		case !seen || !sampling:
			// A baseline, or time the sampler did not see either.
		case v < prev:
			d.timed[k] += v / 1000 // the server restarted (a restore) and counts from zero
		default:
			d.timed[k] += (v - prev) / 1000
		}
	}
	if !sampling {
		return
	}
	sampled := func(c results.DBTimeClass) float64 { return d.sampled[c.Counter()] }
	// A session reading a page shows the state of its statement: the
	// sampler counted it as cpu. What the reads leave may dip below what
	// was reported when a long read ends; the counter then waits for the
	// sessions' CPU to catch up rather than go back.
	d.cpu = max(d.cpu, sampled(results.DBTimeCPU)-d.timed[results.DBWaitRead])
	m[results.DBTimeCPU.Counter()] = d.cpu
	m[results.DBTimeIORead.Counter()] = d.timed[results.DBWaitRead]
	m[results.DBTimeIOWrite.Counter()] = d.timed[results.DBWaitWrite] + d.timed[results.DBWaitLogWrite]
	m[results.DBTimeIOSync.Counter()] = sampled(results.DBTimeIOSync) + d.timed[results.DBWaitDataSync] + d.timed[results.DBWaitSync]
	m[results.DBTimeLock.Counter()] = sampled(results.DBTimeLock)
	m[results.DBTimeOther.Counter()] = sampled(results.DBTimeOther)
	// MariaDB 10.8 and later do not time the redo log: what a commit
	// waits for is then the sessions' sampled wait for it, per commit.
	if ops, wait := results.DBWaitSync.Counters(); !has(m, wait) {
		if commits, ok := m["Com_commit"]; ok {
			m[ops], m[wait] = commits, 1000*sampled(results.DBTimeIOSync)
		}
	}
}

func has(m map[string]float64, name string) bool {
	_, ok := m[name]
	return ok
}

// stop ends the sampling.
func (d *dbTime) stop() { d.activity.Stop() }

// startDBTime prepares the sampling of database time, which the first
// Stats starts, unless the environment turns it off (server.ActivityEnv).
// What the server does not let dbio see is said in the instance's notes,
// or at once through o.Notice when the run has one.
func (in *Instance) startDBTime(ctx context.Context, o engine.Options) {
	if server.ActivityOff(o.Getenv) {
		in.Facts.Notes = append(in.Facts.Notes, "database time was not sampled ("+server.ActivityEnv+"=off)")
		return
	}
	for _, note := range dbTimeBlind(ctx, in.StatsDB()) {
		if o.Notice != nil {
			o.Notice("warning: " + note)
		} else {
			in.Facts.Notes = append(in.Facts.Notes, note)
		}
	}
	in.dbTime = newDBTime(in.admin, in.Facts.Database, o.Notice)
}

// dbTimeBlind says which classes of database time the server does not
// let dbio see, and how its administrator would show them: a managed
// server is configured to show them all (fileWaitSettings).
func dbTimeBlind(ctx context.Context, db *sql.DB) []string {
	var notes []string
	const unseen = "so InnoDB's data file reads count as CPU and its data file writes and syncs are not seen"
	var on bool
	var enabled, timed string
	err := db.QueryRowContext(ctx, statsMarker+"SELECT @@performance_schema").Scan(&on)
	if err == nil && on {
		err = db.QueryRowContext(ctx, statsMarker+"SELECT ENABLED, TIMED FROM performance_schema.setup_instruments WHERE NAME = '"+dataFile+"'").Scan(&enabled, &timed)
	}
	switch {
	case err == nil && !on:
		notes = append(notes, "database time: performance_schema is off on this server, "+unseen+"; start the server with performance_schema=ON and performance-schema-instrument='wait/io/file/innodb/%=ON' to see them")
	case err != nil:
		notes = append(notes, "database time: performance_schema cannot be read ("+shortErr(err)+"), "+unseen)
	case enabled != "YES" || timed != "YES":
		notes = append(notes, "database time: the server does not time InnoDB's data file I/O ("+dataFile+" enabled "+enabled+", timed "+timed+"), "+unseen+"; UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME LIKE 'wait/io/file/innodb/%' to see them")
	}
	if on, err := rowLockMetricOn(ctx, db); err != nil || !on {
		why := "is disabled"
		if err != nil {
			why = "cannot be read (" + shortErr(err) + ")"
		}
		notes = append(notes, "database time: InnoDB's count of row-lock waits ("+rowLockMetric+") "+why+", so sessions waiting for a row lock count as CPU; SET GLOBAL innodb_monitor_enable = '"+rowLockMetric+"' to see them")
	}
	return notes
}

// rowLockMetricOn says whether InnoDB keeps its count of row-lock waits
// (MariaDB says so in ENABLED, MySQL in STATUS).
func rowLockMetricOn(ctx context.Context, db *sql.DB) (bool, error) {
	var on bool
	err := db.QueryRowContext(ctx, statsMarker+"SELECT ENABLED = 1 FROM information_schema.INNODB_METRICS WHERE NAME = '"+rowLockMetric+"'").Scan(&on)
	if err != nil {
		err = db.QueryRowContext(ctx, statsMarker+"SELECT STATUS = 'enabled' FROM information_schema.INNODB_METRICS WHERE NAME = '"+rowLockMetric+"'").Scan(&on)
	}
	return on, err
}

// shortErr is an error's text without the driver's code prefix noise.
func shortErr(err error) string {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}
