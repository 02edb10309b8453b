// Package history remembers every run across results directories: a store
// of each run's identity, storage, engine and settings, environment and
// every step's figures with their units, kept in an embedded SQLite file or
// in a schema of a PostgreSQL database a team shares. The results
// directories stay the source of truth: every row here is read from one,
// and the store can be rebuilt from them (Import).
package history

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	// The embedded engine dbio's SQLite runs use too.
	_ "github.com/mattn/go-sqlite3"

	"dbio/internal/results"
	"dbio/internal/secret"
)

// DefaultPath is where the store is kept when the user names none: under
// the XDG data directory (dataHome, or home's .local/share when empty).
func DefaultPath(home, dataHome string) string {
	if dataHome == "" {
		dataHome = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dataHome, "dbio", "history.db")
}

// Store is the history of runs, in SQLite or PostgreSQL: both answer the
// same queries, written once; only what the two SQL dialects spell
// differently is the dialect's.
type Store struct {
	db *sql.DB
	// path is where the store is, as it may be shown: a PostgreSQL URL
	// without its password.
	path string
	dialect
	// secrets are the password of a PostgreSQL store's URL, as it may be
	// written, scrubbed from its errors and from what it records.
	secrets []string
}

// dialect is what SQLite and PostgreSQL spell differently in the store's queries.
type dialect struct {
	// contains is the function giving the position of its second argument
	// in its first (0 when absent).
	contains string
	// numbered says whether parameters are $1, $2... rather than ?.
	numbered bool
}

var (
	sqliteDialect   = dialect{contains: "instr"}
	postgresDialect = dialect{contains: "strpos", numbered: true}
)

// bind writes query's ? parameters as the dialect numbers them; the
// store's queries hold no ? in a literal.
func (d dialect) bind(query string) string {
	if !d.numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// schema is the store's tables. A run is one row of runs, keyed by its id
// (unique per results directory); its figures are rows of figures, the
// run's own at step index -1. Recording a run again replaces both. The
// columns runs are ordered by compare as bytes (orderedText) in both
// dialects: PostgreSQL's default collation may ignore the punctuation of a
// time, and start times are kept as fixed-width UTC text (timeText).
const schema = `
CREATE TABLE IF NOT EXISTS runs (
	id {{ordered}} PRIMARY KEY,
	kind TEXT NOT NULL,
	name TEXT NOT NULL,
	dir TEXT NOT NULL,
	status TEXT NOT NULL,
	started {{ordered}} NOT NULL,
	ended TEXT NOT NULL,
	command TEXT NOT NULL,
	dbio_version TEXT NOT NULL,
	labels TEXT NOT NULL,
	repeat_set TEXT NOT NULL,
	workload TEXT NOT NULL,
	engine TEXT NOT NULL,
	engine_version TEXT NOT NULL,
	target TEXT NOT NULL,
	device TEXT NOT NULL,
	fs_type TEXT NOT NULL,
	storage_limit TEXT NOT NULL,
	hostname TEXT NOT NULL,
	kernel TEXT NOT NULL,
	cpu_model TEXT NOT NULL,
	cpus BIGINT NOT NULL,
	memory_bytes BIGINT NOT NULL,
	config_key TEXT NOT NULL,
	config TEXT NOT NULL,
	recorded TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started);
CREATE INDEX IF NOT EXISTS runs_config ON runs(config_key);
CREATE TABLE IF NOT EXISTS figures (
	run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	step_index BIGINT NOT NULL,
	step TEXT NOT NULL,
	users BIGINT NOT NULL,
	figure TEXT NOT NULL,
	value DOUBLE PRECISION NOT NULL,
	unit TEXT NOT NULL,
	PRIMARY KEY (run_id, step_index, figure)
);
CREATE INDEX IF NOT EXISTS figures_figure ON figures(figure);
`

// statements are the dialect's schema, one statement each.
func (d dialect) statements() []string {
	ordered := "TEXT"
	if d.numbered {
		ordered = `TEXT COLLATE "C"`
	}
	var out []string
	for _, st := range strings.Split(strings.ReplaceAll(schema, "{{ordered}}", ordered), ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// IsPostgres says whether location names a PostgreSQL store rather than a
// file: a postgres:// or postgresql:// URL.
func IsPostgres(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// Open opens the store at path, creating it when missing: a PostgreSQL
// store when path is a postgres:// URL (see OpenPostgres), else an SQLite
// file (and its directory, readable by its owner alone). Writers wait for
// each other: two runs ending at the same moment both land, one after the
// other; a crash in the middle of a write leaves the store as it was before
// it (SQLite's write-ahead log, PostgreSQL's transactions).
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("history: no store path given")
	}
	if IsPostgres(path) {
		return OpenPostgres(context.Background(), path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("history store %s: %w", path, err)
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("history store %s: is not a regular file; name a new file with --history", path)
	}
	q := url.Values{}
	q.Set("_busy_timeout", "30000")
	q.Set("_journal_mode", "WAL")
	q.Set("_txlock", "immediate")
	q.Set("_foreign_keys", "1")
	db, err := sql.Open("sqlite3", "file:"+url.PathEscape(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("history store %s: %w", path, err)
	}
	for _, st := range sqliteDialect.statements() {
		if _, err := db.Exec(st); err != nil {
			db.Close()
			return nil, fmt.Errorf("history store %s: %w", path, err)
		}
	}
	return &Store{db: db, path: path, dialect: sqliteDialect}, nil
}

// PostgresSchema is the schema of a PostgreSQL database that dbio creates
// and owns for the history; schemaMark is the comment by which dbio knows
// it as its own.
const (
	PostgresSchema = "dbio_history"
	schemaMark     = "dbio history store: created and owned by dbio"
)

// OpenPostgres opens the history in the schema dbio_history of the
// database dsn (a postgres:// URL) reaches, creating the schema and its
// tables when missing. A schema of that name that dbio did not create is
// refused, never written. The password is the server's business: given in
// the URL, in PGPASSWORD or in ~/.pgpass, it is used to connect and is
// never shown (Path) or recorded.
func OpenPostgres(ctx context.Context, dsn string) (*Store, error) {
	s := &Store{path: secret.RedactDSN(dsn), dialect: postgresDialect, secrets: secret.Values(dsn)}
	cfg, err := parsePostgres(dsn)
	if err != nil {
		return nil, err
	}
	// Every unqualified name the store's queries use is its schema's;
	// PostgreSQL's own functions are found in pg_catalog whatever the path.
	cfg.RuntimeParams["search_path"] = PostgresSchema
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "dbio history"
	}
	if cfg.ConnectTimeout == 0 {
		// A run's end waits on the store; a server that does not answer
		// is a warning after this long, not a hang (connect_timeout in
		// the URL sets another).
		cfg.ConnectTimeout = 15 * time.Second
	}
	s.db = stdlib.OpenDB(*cfg)
	if err := s.ensurePostgresSchema(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// CheckPostgres says what is wrong with a PostgreSQL store's URL before
// anything connects, with no password in the message.
func CheckPostgres(dsn string) error {
	_, err := parsePostgres(dsn)
	return err
}

func parsePostgres(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, secret.ScrubError(fmt.Errorf("history store %s: %w", secret.RedactDSN(dsn), err), secret.Values(dsn))
	}
	return cfg, nil
}

// ensurePostgresSchema creates dbio's schema and tables, or finds them
// dbio's. Two dbio processes opening a new store at once take turns (an
// advisory lock held until the transaction ends), so that neither finds
// the other's schema half made.
func (s *Store) ensurePostgresSchema(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, PostgresSchema); err != nil {
		return s.fail(err)
	}
	var mark sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, PostgresSchema).Scan(&mark)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `CREATE SCHEMA `+PostgresSchema); err != nil {
			return s.fail(err)
		}
		if _, err := tx.ExecContext(ctx, `COMMENT ON SCHEMA `+PostgresSchema+` IS '`+schemaMark+`'`); err != nil {
			return s.fail(err)
		}
	case err != nil:
		return s.fail(err)
	case mark.String != schemaMark:
		return fmt.Errorf("history store %s: the schema %s exists and is not dbio's (dbio creates and marks its own); "+
			"name another database in the URL, or rename that schema if it is not in use", s.path, PostgresSchema)
	}
	for _, st := range s.statements() {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return s.fail(err)
		}
	}
	return s.fail(tx.Commit())
}

// fail names the store in err, with no password in it.
func (s *Store) fail(err error) error {
	if err == nil {
		return nil
	}
	return secret.ScrubError(fmt.Errorf("history store %s: %w", s.path, err), s.secrets)
}

// Path is where the store is.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Entry is a run as the store keeps it.
type Entry struct {
	ID, Kind, Name, Dir  string
	Status               results.Status
	Started, Ended       time.Time
	Command, Version     string
	Labels               []string
	RepeatSet            string
	Workload             string
	Engine, EngineVer    string
	Target, Device, FS   string
	Limit                string
	Hostname, Kernel     string
	CPUModel             string
	CPUs                 int
	MemoryBytes          uint64
	ConfigKey            string
	Config               results.RunConfig
	Figures              []StepFigure
	recordedAt, labelsDB string
}

// StepFigure is one figure of one step of a run (step index -1 and step
// "run" for the run's own figures).
type StepFigure struct {
	StepIndex int
	Step      string
	Users     int
	results.Figure
}

// EntryOf is what the store keeps of a run read from its results
// directory; repeatSet names the repeat set it is one repeat of, if any.
func EntryOf(l *results.Loaded, repeatSet string) Entry {
	r := l.Run
	e := Entry{ID: r.ID, Kind: r.Kind, Name: filepath.Base(l.Path), Dir: l.Path, Status: r.Status, Started: r.Started, Ended: r.Ended,
		Command: strings.Join(r.Command, " "), Version: r.Environment.Versions["dbio"], Labels: r.Labels, RepeatSet: repeatSet,
		Workload: r.Config.Workload, Engine: r.Config.Engine, Hostname: r.Environment.Hostname, Kernel: r.Environment.Kernel,
		CPUModel: r.Environment.CPUModel, CPUs: r.Environment.CPUs, MemoryBytes: r.Environment.MemoryBytes, Config: r.Config}
	if e.ID == "" {
		e.ID = e.Name
	}
	if r.Config.Disk != nil && e.Workload == "" {
		e.Workload = "fio"
	}
	for _, en := range r.Engines {
		if e.Engine == "" || en.Engine == e.Engine {
			e.Engine, e.EngineVer = en.Engine, en.Version
			break
		}
	}
	e.Target = r.Config.Target
	for _, t := range r.Environment.Targets {
		if e.Target == "" {
			e.Target = t.Path
		}
		if t.Path == e.Target || e.Device == "" {
			e.Device, e.FS = t.Storage.Device, t.Storage.FSType
			if e.Device == "" {
				e.Device = t.Storage.Source
			}
			if t.Limit != nil {
				e.Limit = limitText(t.Limit.LimitsConfig)
			}
		}
	}
	if e.Limit == "" && !r.Config.Limits.IsZero() {
		e.Limit = limitText(r.Config.Limits)
	}
	e.ConfigKey = configKey(r)
	for _, f := range r.Figures {
		e.Figures = append(e.Figures, StepFigure{StepIndex: -1, Step: "run", Figure: f})
	}
	for _, st := range l.Steps {
		for _, f := range st.Figures {
			e.Figures = append(e.Figures, StepFigure{StepIndex: st.Index, Step: st.Name, Users: st.Users, Figure: f})
		}
	}
	return e
}

func limitText(l results.LimitsConfig) string {
	var parts []string
	for _, p := range []struct {
		k string
		v int64
	}{{"riops", l.ReadIOPS}, {"wiops", l.WriteIOPS}, {"rbps", l.ReadBPS}, {"wbps", l.WriteBPS}} {
		if p.v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", p.k, p.v))
		}
	}
	s := strings.Join(parts, ",")
	if name := l.Class + l.Preset; name != "" {
		s = name + " (" + s + ")"
	}
	return s
}

// configKey names a run's configuration: runs with the same key measured
// the same thing the same way (kind, workload and its settings, engine and
// its settings, users, timing, limits, fio's plan), whatever storage they
// ran on. A trend groups its points by it.
func configKey(r results.Run) string {
	c := r.Config
	c.Target, c.LogTarget = "", ""
	c.EngineOptions.Database = ""
	if c.Pacing != nil {
		p := *c.Pacing
		p.Seed = 0
		c.Pacing = &p
	}
	if c.Disk != nil {
		d := *c.Disk
		d.Targets = nil
		c.Disk = &d
	}
	b, _ := json.Marshal(struct {
		Kind   string
		Config results.RunConfig
	}{r.Kind, c})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Record keeps one run, replacing what the store had of it: recording a
// run again (an import of its directory) changes nothing.
func (s *Store) Record(ctx context.Context, e Entry, now time.Time) error {
	cfg, err := json.Marshal(e.Config)
	if err != nil {
		return err
	}
	labels, _ := json.Marshal(append([]string{}, e.Labels...))
	// run.json's command line is recorded with its passwords masked; the
	// store's own is masked again, should a run name the store's URL in
	// a form that was not.
	command := secret.Scrub(e.Command, s.secrets)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, s.bind(`DELETE FROM runs WHERE id = ?`), e.ID); err != nil {
		return s.fail(err)
	}
	if _, err := tx.ExecContext(ctx, s.bind(`INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
		e.ID, e.Kind, e.Name, e.Dir, string(e.Status), timeText(e.Started), timeText(e.Ended), command, e.Version,
		string(labels), e.RepeatSet, e.Workload, e.Engine, e.EngineVer, e.Target, e.Device, e.FS, e.Limit,
		e.Hostname, e.Kernel, e.CPUModel, e.CPUs, int64(e.MemoryBytes), e.ConfigKey, string(cfg), timeText(now)); err != nil {
		return s.fail(err)
	}
	// A figure recorded twice for one step keeps the last value, as the
	// step's summary does.
	stmt, err := tx.PrepareContext(ctx, s.bind(`INSERT INTO figures VALUES (?,?,?,?,?,?,?)
		ON CONFLICT (run_id, step_index, figure) DO UPDATE SET step = excluded.step, users = excluded.users, value = excluded.value, unit = excluded.unit`))
	if err != nil {
		return s.fail(err)
	}
	defer stmt.Close()
	for _, f := range e.Figures {
		if _, err := stmt.ExecContext(ctx, e.ID, f.StepIndex, f.Step, f.Users, string(f.Name), f.Value, f.Unit); err != nil {
			return s.fail(err)
		}
	}
	return s.fail(tx.Commit())
}

// timeLayout is RFC 3339 in UTC with every digit of the nanoseconds, so
// that times compare as text in the order they happened.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// RecordDir reads the results directory dir and keeps its run.
func (s *Store) RecordDir(ctx context.Context, dir string, now time.Time) (Entry, error) {
	l, err := results.LoadSummary(dir)
	if err != nil {
		return Entry{}, err
	}
	e := EntryOf(l, repeatSetOf(dir))
	return e, s.Record(ctx, e, now)
}

// repeatSetOf names the repeat set dir is a repeat of: its parent's
// directory name when the parent holds a repeat set's manifest.
func repeatSetOf(dir string) string {
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Lstat(filepath.Join(parent, results.RepeatSetFile)); err == nil && fi.Mode().IsRegular() {
		abs, err := filepath.Abs(parent)
		if err != nil {
			return filepath.Base(parent)
		}
		return abs
	}
	return ""
}

// Import keeps every run found under each of dirs: a results directory,
// a repeat set, a suite directory or a directory holding any of them. No
// link is followed. Each run is keyed by its id, so importing again
// changes nothing; the store can be rebuilt from the directories alone.
func (s *Store) Import(ctx context.Context, dirs []string, now time.Time) (imported []Entry, problems []error) {
	for _, root := range dirs {
		var runDirs []string
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			if d.IsDir() && d.Name() == "steps" && path != root {
				return fs.SkipDir
			}
			if !d.IsDir() && d.Name() == "run.json" && d.Type().IsRegular() {
				runDirs = append(runDirs, filepath.Dir(path))
			}
			return nil
		})
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", root, err))
			continue
		}
		if len(runDirs) == 0 {
			problems = append(problems, fmt.Errorf("%s: no results directory (run.json) found in it", root))
			continue
		}
		sort.Strings(runDirs)
		for _, dir := range runDirs {
			abs, err := filepath.Abs(dir)
			if err != nil {
				abs = dir
			}
			e, err := s.RecordDir(ctx, abs, now)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			imported = append(imported, e)
		}
	}
	return imported, problems
}

// Filter picks runs; an empty field picks all.
type Filter struct {
	// Storage matches the target, its device, its file system or its limit, in part.
	Storage string
	Engine  string
	// Workload matches the workload (tpcc, sysbench, fio) or the run's kind (quick, disk).
	Workload string
	Label    string
	Since    time.Time
	// ConfigKey picks the runs of one configuration.
	ConfigKey string
}

func (f Filter) where(d dialect) (string, []any) {
	contains := func(column string) string { return d.contains + "(" + column + ", ?) > 0" }
	var conds []string
	var args []any
	if f.Storage != "" {
		conds = append(conds, "("+contains("target")+" OR "+contains("device")+" OR fs_type = ? OR "+contains("storage_limit")+")")
		args = append(args, f.Storage, f.Storage, f.Storage, f.Storage)
	}
	if f.Engine != "" {
		conds = append(conds, "engine = ?")
		args = append(args, f.Engine)
	}
	if f.Workload != "" {
		conds = append(conds, "(workload = ? OR kind = ?)")
		args = append(args, f.Workload, f.Workload)
	}
	if f.Label != "" {
		b, _ := json.Marshal(f.Label)
		conds = append(conds, contains("labels"))
		args = append(args, string(b))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "started >= ?")
		args = append(args, timeText(f.Since))
	}
	if f.ConfigKey != "" {
		conds = append(conds, "config_key = ?")
		args = append(args, f.ConfigKey)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const entryColumns = `id, kind, name, dir, status, started, ended, command, dbio_version, labels, repeat_set, workload, engine,
	engine_version, target, device, fs_type, storage_limit, hostname, kernel, cpu_model, cpus, memory_bytes, config_key, config`

func scanEntry(row interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var status, started, ended, labels, cfg string
	var mem int64
	if err := row.Scan(&e.ID, &e.Kind, &e.Name, &e.Dir, &status, &started, &ended, &e.Command, &e.Version, &labels, &e.RepeatSet,
		&e.Workload, &e.Engine, &e.EngineVer, &e.Target, &e.Device, &e.FS, &e.Limit, &e.Hostname, &e.Kernel, &e.CPUModel,
		&e.CPUs, &mem, &e.ConfigKey, &cfg); err != nil {
		return e, err
	}
	e.Status, e.MemoryBytes = results.Status(status), uint64(max(mem, 0))
	e.Started, _ = time.Parse(time.RFC3339Nano, started)
	e.Ended, _ = time.Parse(time.RFC3339Nano, ended)
	_ = json.Unmarshal([]byte(labels), &e.Labels)
	_ = json.Unmarshal([]byte(cfg), &e.Config)
	return e, nil
}

// List is the runs f picks, oldest first.
func (s *Store) List(ctx context.Context, f Filter) ([]Entry, error) {
	where, args := f.where(s.dialect)
	rows, err := s.db.QueryContext(ctx, s.bind(`SELECT `+entryColumns+` FROM runs`+where+` ORDER BY started, id`), args...)
	if err != nil {
		return nil, s.fail(err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// ErrUnknownRun is the error of a run the store does not have.
var ErrUnknownRun = errors.New("no such run in the history")

// Get is one run by its id or its results directory's name or path, with its figures.
func (s *Store) Get(ctx context.Context, ref string) (Entry, error) {
	abs, _ := filepath.Abs(ref)
	row := s.db.QueryRowContext(ctx, s.bind(`SELECT `+entryColumns+` FROM runs WHERE id = ? OR name = ? OR dir = ? ORDER BY started DESC LIMIT 1`), ref, ref, abs)
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("%q: %w (import its results directory with dbio history import DIR)", ref, ErrUnknownRun)
	}
	if err != nil {
		return Entry{}, s.fail(err)
	}
	e.Figures, err = s.figures(ctx, e.ID)
	return e, err
}

func (s *Store) figures(ctx context.Context, id string) ([]StepFigure, error) {
	rows, err := s.db.QueryContext(ctx, s.bind(`SELECT step_index, step, users, figure, value, unit FROM figures WHERE run_id = ? ORDER BY step_index, figure`), id)
	if err != nil {
		return nil, s.fail(err)
	}
	defer rows.Close()
	var out []StepFigure
	for rows.Next() {
		var f StepFigure
		var name string
		if err := rows.Scan(&f.StepIndex, &f.Step, &f.Users, &name, &f.Value, &f.Unit); err != nil {
			return nil, err
		}
		f.Name = results.FigureName(name)
		out = append(out, f)
	}
	return out, rows.Err()
}

// Point is one value of a figure in a trend: a run's step.
type Point struct {
	Run Entry
	StepFigure
}

// Trend is every value of figure recorded by the runs f picks, at the
// step named step (every step when empty), oldest run first.
func (s *Store) Trend(ctx context.Context, f Filter, figure results.FigureName, step string) ([]Point, error) {
	where, args := f.where(s.dialect)
	cond := " WHERE "
	if where != "" {
		cond = where + " AND "
	}
	q := `SELECT ` + prefixed("r.", entryColumns) + `, f.step_index, f.step, f.users, f.value, f.unit
		FROM runs r JOIN figures f ON f.run_id = r.id` + cond + ` f.figure = ?`
	args = append(args, string(figure))
	if step != "" {
		q += ` AND f.step = ?`
		args = append(args, step)
	}
	q += ` ORDER BY r.started, r.id, f.step_index`
	rows, err := s.db.QueryContext(ctx, s.bind(q), args...)
	if err != nil {
		return nil, s.fail(err)
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var p Point
		var status, started, ended, labels, cfg string
		var mem int64
		e := &p.Run
		if err := rows.Scan(&e.ID, &e.Kind, &e.Name, &e.Dir, &status, &started, &ended, &e.Command, &e.Version, &labels, &e.RepeatSet,
			&e.Workload, &e.Engine, &e.EngineVer, &e.Target, &e.Device, &e.FS, &e.Limit, &e.Hostname, &e.Kernel, &e.CPUModel,
			&e.CPUs, &mem, &e.ConfigKey, &cfg, &p.StepIndex, &p.Step, &p.Users, &p.Value, &p.Unit); err != nil {
			return nil, err
		}
		e.Status, e.MemoryBytes = results.Status(status), uint64(max(mem, 0))
		e.Started, _ = time.Parse(time.RFC3339Nano, started)
		e.Ended, _ = time.Parse(time.RFC3339Nano, ended)
		_ = json.Unmarshal([]byte(labels), &e.Labels)
		_ = json.Unmarshal([]byte(cfg), &e.Config)
		p.Name = figure
		out = append(out, p)
	}
	return out, rows.Err()
}

// prefixed qualifies each of a list of columns with a table's alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
