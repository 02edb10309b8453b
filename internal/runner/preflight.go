package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"dbio/internal/controlchars"
	"dbio/internal/engine"
	"dbio/internal/fio"
	"dbio/internal/iolimit"
	"dbio/internal/memlimit"
	"dbio/internal/secret"
	"dbio/internal/target"
	"dbio/internal/units"
	"dbio/internal/workload"
)

// Problems are every reason a run cannot start, found before anything was
// written: the command's bad input, reported together.
type Problems struct{ List []error }

func (p *Problems) Error() string {
	msgs := make([]string, len(p.List))
	for i, e := range p.List {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n  ")
}

// problems returns nil for no problem, so that callers can return it as an error.
func problems(list []error) error {
	if len(list) == 0 {
		return nil
	}
	return &Problems{List: dedupe(list)}
}

// dedupe drops repeated problems (one target in several roles or runs) and sorts them.
func dedupe(list []error) []error {
	seen := map[string]bool{}
	var out []error
	for _, e := range list {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
	return out
}

// Places are the directories a run writes in, as a preflight sees them.
type Places struct {
	// Data, Log and Backup are targets ("" when the run has none in that role).
	Data, Log, Backup string
	// Results is the directory that receives the results directory.
	Results string
	// Create accepts targets that do not exist yet (--create-target).
	Create bool
	// Engine, when it keeps files on the targets, says which of dbio's
	// subdirectories it will use, so that a link or a foreign directory
	// planted there is found now.
	Engine engine.Engine
	// Subdirs are dbio's subdirectories the run uses on the data target
	// beside the engine's (fio's working directory), looked at the same way.
	Subdirs []string
	// Limits need a block device behind the data and log targets.
	Limits iolimit.Limits
}

// Problems inspects every place without writing anything and returns all
// that is wrong with them; sys resolves the storage behind them.
func (pl Places) Problems(sys target.SysFS) []error {
	var out []error
	type look struct {
		in target.Inspection
		ok bool
	}
	looked := map[string]look{}
	inspect := func(path string) (target.Inspection, bool) {
		if l, seen := looked[path]; seen {
			return l.in, l.ok
		}
		if err := pathText("target", path); err != nil {
			out = append(out, err)
			looked[path] = look{}
			return target.Inspection{}, false
		}
		in, ps := target.Inspect(sys, path, pl.Create)
		out = append(out, ps...)
		looked[path] = look{in, len(ps) == 0}
		return in, len(ps) == 0
	}
	separate := pl.Log != "" && !samePath(pl.Log, pl.Data)
	for _, role := range []struct {
		path        string
		log, backup bool
	}{{path: pl.Data}, {path: pl.Log, log: true}, {path: pl.Backup, backup: true}} {
		if role.path == "" || (role.log && !separate) {
			continue
		}
		in, ok := inspect(role.path)
		if !ok || role.backup {
			// Backups go to directories the backup names itself; no disk limit applies to them.
			continue
		}
		if err := target.Holding(sys, in.Path); err != nil {
			// Another run is at work there: what it is making is no
			// stranger's, and the run cannot start anyway.
			out = append(out, err)
			continue
		}
		if in.Exists {
			var subs []string
			if l, isLayout := pl.Engine.(engine.Layout); isLayout {
				data, log := l.Subdirs(separate)
				subs = data
				if role.log {
					subs = log
				}
			}
			if !role.log {
				subs = append(subs, pl.Subdirs...)
			}
			for _, s := range subs {
				if err := target.CheckOwned(filepath.Join(in.Path, target.DirName, s)); err != nil {
					out = append(out, err)
				}
			}
		}
		if !pl.Limits.IsZero() && len(in.Storage.Physical) == 0 {
			fs := in.Storage.FSType
			if fs == "" {
				fs = "a filesystem dbio cannot trace to a disk"
			}
			out = append(out, fmt.Errorf("--limit: target %s is on %s, which has no block device to throttle: drop --limit, or choose a target on a disk", in.Path, fs))
		}
	}
	if pl.Results != "" {
		if err := pathText("results directory", pl.Results); err != nil {
			return append(out, err)
		}
		_, ps := target.InspectDir(sys, "results directory", pl.Results, true)
		out = append(out, ps...)
	}
	return out
}

// pathText refuses a path holding a control character: dbio writes its
// places into configuration files (my.cnf takes a line break in a value
// as the start of an option of the user's choosing), fio's job files and
// the terminal. The path is quoted, its control characters escaped.
func pathText(what, path string) error {
	if err := controlchars.Check(path); err != nil {
		return fmt.Errorf("%s %q: the path %w: give a path without control characters", what, path, err)
	}
	return nil
}

// samePath says whether two target paths name one directory.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Preflight finds, without writing anything, every reason p cannot start:
// its places (see Places.Problems) and, once those are sound, the free space
// on the data target and for the results (added up when they share a
// filesystem; the database a fresh run replaces counts as free).
func Preflight(p Plan, sys target.SysFS) error {
	p = p.withConnectionRoom()
	return preflight(context.Background(), p, p.userLoad(), sys)
}

// withConnectionRoom sizes the pool bound of a server dbio manages, and
// with it the server's max_connections (server.MaxConnections), from the
// connections p's steps open, when the caller left the bound to dbio: a
// climb to 496 users (AS3AP's default) was refused against a fixed 300.
// Past managedConnectionsMost the preflight refuses the users instead, and
// says how to give the server more by a setting.
func (p Plan) withConnectionRoom() Plan {
	o := p.EngineOptions
	if _, server := p.Engine.(engine.ConnectionLimit); server && o.DSN == "" && o.MaxConns == 0 {
		p.EngineOptions.MaxConns = min(p.userLoad().connections(), managedConnectionsMost)
	}
	return p
}

// managedConnectionsMost bounds the connections dbio sizes a server for on
// its own: each one reserves shared memory in the server whether or not it
// is used, and a mistyped user count (100000) should be refused before the
// start rather than fail inside the server.
const managedConnectionsMost = 4096

// userLoad is p's steps of users as its body runs them, their pools asked
// of the workload: a noisy-neighbour run's are each tenant's users, on its
// own server.
func (p Plan) userLoad() userLoad {
	n := p.needs()
	return userLoadOf(p.Workload, n.users, n.openLoop, p.Engine, p.EngineOptions)
}

func preflight(ctx context.Context, p Plan, load userLoad, sys target.SysFS) error {
	n := p.needs()
	pl := Places{Data: p.DataPath, Log: p.LogPath, Backup: p.BackupPath, Results: p.ResultsBase,
		Create: p.CreateTargets, Engine: p.Engine, Limits: p.Limits, Subdirs: n.subdirs}
	list := pl.Problems(sys)
	if len(list) == 0 {
		list = spaceProblems(p, n)
	}
	if n.steady != nil {
		list = append(list, n.steady.Problems(p.Workload, n.rampUp)...)
	}
	if n.precision != nil {
		list = append(list, n.precision.Problems(p.Workload, n.step, n.paced)...)
	}
	if n.servers == 0 {
		// No server runs here: the hosts' dbio judge theirs.
		return problems(list)
	}
	list = append(list, engineProblems(ctx, p, load, sys, commandLine)...)
	return problems(list)
}

// problemForm is how a run's problems name what the user wrote: the
// command line's flags, or a suite run's keys under the run's name.
type problemForm struct {
	// name is a setting's name as the user writes it.
	name func(string) string
	// run is the suite run's name, "" on the command line.
	run string
}

var commandLine = problemForm{name: flagForm}

func suiteRun(name string) problemForm { return problemForm{name: keyForm, run: name} }

// in names the run a problem belongs to, in a suite.
func (f problemForm) in(errs ...error) []error {
	if f.run == "" {
		return errs
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = fmt.Errorf("run %s: %w", f.run, e)
	}
	return out
}

// engineProblems are what a run's engine and its users ask that cannot be
// given, judged alike for the command line and for each of a suite's runs
// before its first: the memory its servers need under a cap and beside
// each other, the connections its steps open, its settings, its
// database's name. load is its steps of users; f names what the user wrote.
func engineProblems(ctx context.Context, p Plan, load userLoad, sys target.SysFS, f problemForm) []error {
	n, o := p.needs(), p.EngineOptions
	var list []error
	if o.DSN == "" && p.Engine != nil {
		list = append(list, f.in(memoryProblems(f.name("server-memory"), p.Engine, o, load.connections(), n.servers, memlimit.SystemHost(sys.Sys))...)...)
		if n.servers > 1 {
			list = append(list, f.in(tenantsMemoryProblems(p.Engine, o, load.connections(), n.servers, memAvailable(sys.Proc))...)...)
		}
	}
	if p.Engine != nil {
		list = append(list, f.in(connectionProblems(f.name, p.Engine, o, load)...)...)
	}
	list = append(list, f.in(settingProblems(ctx, f.name, p.Engine, o, p.DataPath, p.LogPath)...)...)
	if err := engine.DatabaseNameProblem(o.Database); err != nil {
		list = append(list, f.in(fmt.Errorf("%s: %w", f.name("database"), err))...)
	}
	list = append(list, resetProblems(p, f)...)
	return list
}

// settingProblems are the user's engine settings that the engine would
// not take (a name it does not have, with the closest it does) or that
// would take the instance outside dbio's directory on its data and log
// targets: a path elsewhere, a program, a library, or a setting dbio
// places itself (see engine.SettingsChecker). name says how the run
// names its settings.
func settingProblems(ctx context.Context, name func(string) string, e engine.Engine, o engine.Options, data, log string) []error {
	sc, ok := e.(engine.SettingsChecker)
	if !ok || len(o.Settings) == 0 || o.DSN != "" {
		return nil
	}
	var out []error
	for _, err := range sc.SettingProblems(ctx, o.Settings, engine.Confinement{Data: data, Log: log}) {
		out = append(out, fmt.Errorf("%s %w", name("setting"), err))
	}
	return out
}

// userLoad is a plan's steps of users as the server sees them: each
// step's user count and the transaction monitor's pool its terminals
// share, asked of the workload once per user count (0: a connection per
// user, as for a workload without a monitor or an open-loop run).
type userLoad struct {
	users    []int
	openLoop bool
	pools    map[int]int
	// own is how many connections dbio holds beside the users', ownWhat
	// what for (ownConnections).
	own     int
	ownWhat string
}

func userLoadOf(w workload.Workload, users []int, openLoop bool, e engine.Engine, o engine.Options) userLoad {
	l := userLoad{users: users, openLoop: openLoop, pools: map[int]int{}}
	l.own, l.ownWhat = ownConnections(e, o)
	if m, ok := w.(workload.Monitored); ok {
		for _, u := range users {
			if _, asked := l.pools[u]; !asked {
				l.pools[u] = m.Pool(u)
			}
		}
	}
	return l
}

// connections is how many connections dbio opens to a server at most
// while users run: one per user, or the transaction monitor's pool when
// terminals share connections, and dbio's own beside them (l.own).
func (l userLoad) connections() int {
	most := 0
	for _, u := range l.users {
		most = max(most, l.stepConnections(u))
	}
	return most + l.own
}

// ownConnections is how many connections dbio itself holds on e's server
// beside the users', and what for: the engine says (a server's counters and
// its database time), else the one its counters are read on.
func ownConnections(e engine.Engine, o engine.Options) (int, string) {
	if lim, ok := e.(engine.ConnectionLimit); ok {
		return lim.OwnConnections(o)
	}
	return 1, "the server's counters"
}

// ownPhrase completes "N users with a connection each ... make M": the
// connections dbio holds beside them, "" when it holds none.
func (l userLoad) ownPhrase() string {
	switch l.own {
	case 0:
		return ""
	case 1:
		return " and the one dbio reads " + l.ownWhat + " on"
	}
	return fmt.Sprintf(" and the %d dbio reads %s on", l.own, l.ownWhat)
}

// stepConnections is how many connections a step of users opens.
func (l userLoad) stepConnections(users int) int {
	if pool := l.pools[users]; pool > 0 && !l.openLoop {
		return pool
	}
	return users
}

// flagForm and keyForm name a setting as the command line and a suite
// file write it.
func flagForm(name string) string { return "--" + name }
func keyForm(name string) string {
	if name == "setting" {
		return "settings"
	}
	return strings.ReplaceAll(name, "-", "_")
}

// externalConnectionProblems connects to the existing server --dsn
// reaches before anything is written (on a connection of its own that
// creates nothing there): a DSN it cannot connect with (a wrong user,
// password, port or database, a server that is down) is refused, and so
// is a run that needs more connections than its max_connections; a
// managed server's limit is checked by connectionProblems.
func externalConnectionProblems(ctx context.Context, p Plan, load userLoad, getenv func(string) string) error {
	o := p.EngineOptions
	if o.Getenv == nil {
		o.Getenv = getenv
	}
	limit, err := dsnConnection(ctx, p.Engine, o)
	if err != nil {
		return &Problems{List: []error{fmt.Errorf("--dsn %w", err)}}
	}
	if limit == 0 || p.Workload == nil || len(load.users) == 0 {
		return nil
	}
	if need := load.connections(); need > limit {
		return &Problems{List: []error{tooManyConnections(flagForm, load, need, limit, "as the server at --dsn says",
			fmt.Sprintf("raise the server's max_connections to at least %d in its own configuration", need))}}
	}
	return nil
}

// connectTimeout bounds the preflight's connection to an existing
// server, which a firewall that drops packets would hold for minutes.
const connectTimeout = 30 * time.Second

// dsnConnection connects to the existing server o.DSN reaches, as a run
// would, and reads its max_connections (0 when o has no DSN or the engine
// cannot ask). The error starts with the DSN, its password masked, and
// says what to check.
func dsnConnection(ctx context.Context, e engine.Engine, o engine.Options) (int, error) {
	ec, ok := e.(engine.ExternalConnections)
	if !ok || o.DSN == "" {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	limit, err := ec.ExternalMaxConnections(ctx, o)
	var refused *engine.ConnectError
	if errors.As(err, &refused) {
		// What the server said, where, and what to check is the whole story.
		return 0, fmt.Errorf("%s: %s", secret.RedactDSN(o.DSN), secret.Scrubber(o.DSN)(refused.Error()))
	}
	if err != nil {
		scrub := secret.Scrubber(o.DSN)
		return 0, fmt.Errorf("%s: cannot connect: %s: check the user, password, host, port and database it names (a password may come from PGPASSWORD or MYSQL_PWD), and that the server runs",
			secret.RedactDSN(o.DSN), scrub(err.Error()))
	}
	return limit, nil
}

// connectionProblems are the reasons a step of users cannot get its
// connections, found before anything starts: an open-loop run that would
// set a pool aside, or more connections than the server accepts (its
// max_connections as dbio will configure it, or as a setting gives it).
// An external server's limit is asked of it before the run writes
// anything (see externalConnectionProblems).
func connectionProblems(name func(string) string, e engine.Engine, o engine.Options, load userLoad) []error {
	var out []error
	for _, u := range load.users {
		if load.openLoop {
			if pool := load.pools[u]; pool > 0 && pool < u {
				out = append(out, fmt.Errorf("%s %d: an open-loop run (a rate or a goal) gives each of its %d terminals a schedule and a connection of its own: drop %s, or the rate", name("pool"), pool, u, name("pool")))
			}
		}
	}
	lim, ok := e.(engine.ConnectionLimit)
	if !ok || o.DSN != "" || len(load.users) == 0 {
		return out
	}
	limit, from := lim.MaxConnections(o)
	if need := load.connections(); need > limit {
		raise := ""
		if takesSetting(e, "max_connections", strconv.Itoa(need)) {
			raise = fmt.Sprintf("raise max_connections (%s max_connections=%d)", name("setting"), need)
		}
		out = append(out, tooManyConnections(name, load, need, limit, from, raise))
	}
	return out
}

// takesSetting says whether e would take the setting name=value: SQLite
// has no max_connections to raise, a server does.
func takesSetting(e engine.Engine, name, value string) bool {
	sc, ok := e.(engine.SettingsChecker)
	return ok && len(sc.SettingProblems(context.Background(), map[string]string{name: value}, engine.Confinement{})) == 0
}

// orRaise is ", or " and how to raise the limit, "" when nothing can.
func orRaise(raise string) string {
	if raise == "" {
		return ""
	}
	return ", or " + raise
}

// tooManyConnections says which setting asks for need connections, more
// than the limit a server accepts (from says where that limit comes from),
// and what to change; raise is how to raise the limit itself.
func tooManyConnections(name func(string) string, load userLoad, need, limit int, from, raise string) error {
	most := slices.Max(load.users)
	conns := load.stepConnections(most)
	if !load.openLoop && load.pools[most] > 0 {
		return fmt.Errorf("%s %d: the %d terminals' pool of %d connections%s make %d, more than the server accepts (max_connections %d, %s): set %s to at most %d (the terminals share it)%s",
			name("pool"), conns, most, conns, load.ownPhrase(), need, limit, from, name("pool"), limit-load.own, orRaise(raise))
	}
	return fmt.Errorf("%s: %d users with a connection each%s make %d connections, more than the server accepts (max_connections %d, %s): run fewer users, let paced terminals share a pool (%s with %s)%s",
		name("users"), most, load.ownPhrase(), need, limit, from, name("keying-thinking"), name("pool"), orRaise(raise))
}

// spaceProblems checks the free space p needs on its data target and for
// its results, as its body's needs n say.
func spaceProblems(p Plan, n needs) []error {
	needs := []target.Need{{Path: p.ResultsBase, Bytes: resultsBytes(n.steps, n.stepTime), What: "the results"}}
	if p.DataPath != "" && p.SpaceNeeded > 0 && !(p.Workload != nil && isReuse(p)) {
		needs = append(needs, databaseNeeds(p.Engine, p.EngineOptions, p.SpaceNeeded, p.DataPath, p.LogPath, fmt.Sprintf("%s at this scale", p.Kind), n.servers)...)
	}
	needs = append(needs, pristineNeed(p)...)
	return target.SpaceProblems(needs)
}

// databaseNeeds is the space a fresh database takes: the workload's data
// (data bytes, named what) on the data target, where the instance it
// replaces counts as free, and the engine's own files (a redo log, WAL,
// system tablespaces) beside it or on the log target, for each of servers
// instances.
func databaseNeeds(e engine.Engine, o engine.Options, data uint64, dataPath, logPath, what string, servers int) []target.Need {
	n := target.Need{Path: dataPath, Bytes: data, What: what}
	// The instance a fresh start re-creates frees its directories: on the
	// data target, and on the log target when the engine keeps one there.
	var logReclaim uint64
	if l, ok := e.(engine.Layout); ok {
		n.Reclaim = target.OwnedBytes(dataPath, l.Replaces(o)...)
		if logPath != "" {
			_, logs := l.Subdirs(true)
			logReclaim = target.OwnedBytes(logPath, logs...)
		}
	}
	s, ok := e.(engine.SpaceNeeds)
	if !ok {
		return []target.Need{n}
	}
	// With the engine's files beside it, each part says its size.
	n.What += " (" + units.FormatBytes(data) + ")"
	needs := []target.Need{n}
	for _, f := range s.SpaceNeed(o, data) {
		at := dataPath
		if f.OnLog && logPath != "" {
			at = logPath
		}
		f.Bytes *= uint64(max(servers, 1))
		size := units.FormatBytes(f.Bytes)
		if servers > 1 {
			size = fmt.Sprintf("%d servers, %s", servers, size)
		}
		need := target.Need{Path: at, Bytes: f.Bytes, What: f.What + " (" + size + ")"}
		if at == logPath && at != dataPath {
			need.Reclaim, logReclaim = logReclaim, 0 // counted once
		}
		needs = append(needs, need)
	}
	return needs
}

// resultsBytes is a generous estimate of a results directory: reports,
// run.json and logs, plus the per-second series and histograms of each
// step (a few hundred bytes a second are measured; servers' logs add more).
func resultsBytes(steps int, perStep time.Duration) uint64 {
	const fixed, perSecond = 16 << 20, 4 << 10
	return fixed + uint64(max(steps, 1))*uint64(max(perStep/time.Second, 1))*perSecond
}

// ResultsBytes is what the results of a run of this length need, for
// commands that do not go through Run (dbio disk).
func ResultsBytes(d time.Duration) uint64 { return resultsBytes(1, d) }

// Holder describes this process as the holder of a run's targets. The
// command line is cut at the first argument that mentions --dsn, so that a
// password on it is never written down, and kept short.
func Holder(command []string, now time.Time) target.Holder {
	const most, longest = 24, 200
	var kept []string
	for _, a := range command {
		if strings.Contains(a, "--dsn") {
			kept = append(kept, "--dsn", "(rest not recorded)")
			break
		}
		if len(kept) == most {
			kept = append(kept, "…")
			break
		}
		if len(a) > longest {
			a = a[:longest] + "…"
		}
		kept = append(kept, a)
	}
	return target.Holder{PID: os.Getpid(), Command: kept, Started: now}
}

// LockTargets takes every target in paths for the run (each directory once,
// whatever path names it), creating the missing ones first when create is
// set. The release gives them all back; on error none is held.
func LockTargets(sys target.SysFS, paths []string, create bool, h target.Holder) (release func(), err error) {
	var locks []*target.Lock
	release = func() {
		for _, l := range locks {
			_ = l.Release()
		}
	}
	var opened []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		dup := false
		for _, o := range opened {
			dup = dup || samePath(o, p)
		}
		if dup {
			continue
		}
		open := target.Open
		if create {
			open = target.Create
		}
		t, err := open(p)
		if err != nil {
			release()
			return nil, err
		}
		l, err := t.Lock(sys, h)
		if err != nil {
			release()
			return nil, err
		}
		opened = append(opened, p)
		locks = append(locks, l)
	}
	return release, nil
}

// prepareTargets is the start of Run: the preflight, an external server's
// max_connections, what the body uses on other hosts, then the targets
// taken for the whole run (unless the caller holds them already).
func prepareTargets(ctx context.Context, p Plan, env Env) (release func(), err error) {
	load := p.userLoad()
	if err := preflight(ctx, p, load, env.SysFS); err != nil {
		return nil, err
	}
	if err := externalConnectionProblems(ctx, p, load, env.Getenv); err != nil {
		return nil, err
	}
	if check := p.needs().elsewhere; check != nil {
		if err := check(ctx); err != nil {
			return nil, err
		}
	}
	if p.TargetsHeld {
		return func() {}, nil
	}
	return LockTargets(env.SysFS, []string{p.DataPath, p.LogPath, p.BackupPath}, p.CreateTargets, Holder(p.Command, env.Now()))
}

// IsBadInput says whether a run's error is the user's to fix before it can
// start (a preflight problem, a target held by another run, or an option an
// existing server cannot take, should an engine find it before preflight
// does), so that the command exits with its usage code.
func IsBadInput(err error) bool {
	var ps *Problems
	var managed *engine.ManagedOnlyError
	return errors.As(err, &ps) || errors.Is(err, target.ErrBusy) || errors.As(err, &managed)
}

// Preflight finds, before the suite writes anything, every reason one of
// its runs could not start: what resolving them found, their places
// (targets in every role and the results directory), a DSN that does not
// parse or does not match the transport the suite names, options an
// external server cannot take, and each run's free space on its data
// target. Problems are named as the suite file writes its keys.
func (s Suite) Preflight(sys target.SysFS) error {
	list := append([]error(nil), s.Problems...)
	for _, r := range s.Runs {
		switch {
		case r.Disk != nil:
			list = append(list, s.diskProblems(*r.Disk, sys)...)
		case r.Plan != nil:
			list = append(list, s.runProblems(r.Name, *r.Plan, sys)...)
		}
	}
	return problems(list)
}

// diskProblems are a suite's disk run's places: its target on this
// machine (a host's target is checked on the host) with fio's directory on
// it, and the results directory.
func (s Suite) diskProblems(d DiskPlan, sys target.SysFS) []error {
	pl := Places{Results: s.Results, Create: s.CreateTargets, Limits: d.Fio.Limits, Subdirs: []string{fio.WorkSubdir}}
	if !d.Fio.Config.Fleet() && len(d.Fio.Config.Targets) > 0 {
		pl.Data = d.Fio.Config.Targets[0]
	}
	return pl.Problems(sys)
}

// runProblems are a suite's database run's problems: its places, then what
// its engine and workload ask of them once those are sound.
func (s Suite) runProblems(name string, p Plan, sys target.SysFS) []error {
	n := p.needs()
	if n.servers == 0 && p.DataPath == "" {
		// Each host's dbio checks its own target, engine and space; its
		// target is checked over ssh when its run starts.
		return Places{Results: s.Results}.Problems(sys)
	}
	if n.servers == 0 {
		// A body that runs no server on a target of this machine (a
		// replay): its target, dbio's directories on it, and its space.
		pl := Places{Results: s.Results, Create: s.CreateTargets, Limits: p.Limits, Data: p.DataPath, Subdirs: n.subdirs}
		ps := pl.Problems(sys)
		if len(ps) == 0 && p.SpaceNeeded > 0 {
			ps = target.SpaceProblems([]target.Need{{Path: p.DataPath, Bytes: p.SpaceNeeded, Reclaim: target.OwnedBytes(p.DataPath, n.subdirs...), What: fmt.Sprintf("run %s's working file", name)}})
		}
		return ps
	}
	pl := Places{Results: s.Results, Create: s.CreateTargets, Engine: p.Engine, Limits: p.Limits,
		Data: p.DataPath, Log: p.LogPath, Backup: p.BackupPath}
	ps := pl.Problems(sys)
	list := ps
	f := suiteRun(name)
	if n.steady != nil && p.Workload != nil {
		list = append(list, f.in(n.steady.Problems(p.Workload, n.rampUp)...)...)
	}
	if n.precision != nil && p.Workload != nil {
		list = append(list, f.in(n.precision.Problems(p.Workload, n.step, n.paced)...)...)
	}
	eo := p.EngineOptions
	list = append(list, engineProblems(context.Background(), p, p.userLoad(), sys, f)...)
	if eo.DSN != "" && p.Engine != nil {
		ps := dsnProblems(name, p.Engine, eo.DSN, eo.Transport, eo)
		if len(ps) == 0 {
			if _, err := dsnConnection(context.Background(), p.Engine, eo); err != nil {
				ps = append(ps, fmt.Errorf("run %s: dsn %w", name, err))
			}
		}
		list = append(list, ps...)
	}
	if len(ps) > 0 || eo.DSN != "" || p.Workload == nil {
		return list
	}
	if p.SpaceNeeded > 0 {
		list = append(list, target.SpaceProblems(databaseNeeds(p.Engine, eo, p.SpaceNeeded, p.DataPath, p.LogPath, fmt.Sprintf("run %s (%s at this scale)", name, p.Kind), n.servers))...)
	}
	return list
}

// dsnProblems checks an external server's DSN without connecting: it
// parses, the engine has an external mode, a transport the suite names
// matches it, and no option only a managed server takes is asked for. The
// DSN is shown with its password masked.
func dsnProblems(run string, eng engine.Engine, dsn, transport string, o engine.Options) []error {
	masked, scrub := secret.RedactDSN(dsn), secret.Scrubber(dsn)
	var out []error
	c, ok := eng.(engine.DSNChecker)
	if !ok {
		return []error{fmt.Errorf("run %s: dsn: %s", run, (&engine.NoExternalModeError{Engine: eng.Name()}).InTable())}
	}
	got, err := c.CheckDSN(dsn)
	switch {
	case err != nil:
		out = append(out, fmt.Errorf("run %s: dsn %s does not parse: %s", run, masked, scrub(err.Error())))
	case transport != "" && transport != got:
		out = append(out, fmt.Errorf("run %s: transport %q does not match dsn %s, which connects over %s: leave transport out (the DSN decides) or set it to %q", run, transport, masked, got, got))
	}
	for _, e := range o.ManagedOnly() {
		out = append(out, fmt.Errorf("run %s: %s: %s", run, e.Key(), e.InTable()))
	}
	return out
}

// suiteTargets are every target path the suite's runs use, for taking them all at once.
func (s Suite) suiteTargets() []string {
	var paths []string
	for _, r := range s.Runs {
		switch {
		case r.Disk != nil:
			if !r.Disk.Fio.Config.Fleet() {
				// A host's target is checked on the host, and locked by no one yet.
				paths = append(paths, r.Disk.Fio.Config.Targets...)
			}
		case r.Plan != nil:
			paths = append(paths, r.Plan.DataPath, r.Plan.LogPath, r.Plan.BackupPath)
		}
	}
	return paths
}
