package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

// The wait events of type IO of each version, as the version spells them:
// 15's from the names in its server program (15.20), 16's from the
// pgstat_get_wait_io switch of its wait_event.c, 17's as its pg_wait_events
// view lists them (17 generates the names from wait_event_names.txt and
// spells some anew: WalSync for WALSync, SlruRead for SLRURead).
var (
	ioWaits15 = strings.Fields(`BaseBackupRead BaseBackupSync BaseBackupWrite BufFileRead BufFileTruncate BufFileWrite
ControlFileRead ControlFileSync ControlFileSyncUpdate ControlFileWrite ControlFileWriteUpdate CopyFileRead CopyFileWrite
DSMFillZeroWrite DataFileExtend DataFileFlush DataFileImmediateSync DataFilePrefetch DataFileRead DataFileSync
DataFileTruncate DataFileWrite LockFileAddToDataDirRead LockFileAddToDataDirSync LockFileAddToDataDirWrite
LockFileCreateRead LockFileCreateSync LockFileCreateWrite LockFileReCheckDataDirRead LogicalRewriteCheckpointSync
LogicalRewriteMappingSync LogicalRewriteMappingWrite LogicalRewriteSync LogicalRewriteTruncate LogicalRewriteWrite
RelationMapRead RelationMapSync RelationMapWrite ReorderBufferRead ReorderBufferWrite ReorderLogicalMappingRead
ReplicationSlotRead ReplicationSlotRestoreSync ReplicationSlotSync ReplicationSlotWrite SLRUFlushSync SLRURead SLRUSync
SLRUWrite SnapbuildRead SnapbuildSync SnapbuildWrite TimelineHistoryFileSync TimelineHistoryFileWrite
TimelineHistoryRead TimelineHistorySync TimelineHistoryWrite TwophaseFileRead TwophaseFileSync TwophaseFileWrite
VersionFileSync VersionFileWrite WALBootstrapSync WALBootstrapWrite WALCopyRead WALCopySync WALCopyWrite WALInitSync
WALInitWrite WALRead WALSenderTimelineHistoryRead WALSync WALSyncMethodAssign WALWrite`)
	ioWaits16 = strings.Fields(`BaseBackupRead BaseBackupSync BaseBackupWrite BufFileRead BufFileWrite BufFileTruncate
ControlFileRead ControlFileSync ControlFileSyncUpdate ControlFileWrite ControlFileWriteUpdate CopyFileRead CopyFileWrite
DataFileExtend DataFileFlush DataFileImmediateSync DataFilePrefetch DataFileRead DataFileSync DataFileTruncate
DataFileWrite DSMAllocate DSMFillZeroWrite LockFileAddToDataDirRead LockFileAddToDataDirSync LockFileAddToDataDirWrite
LockFileCreateRead LockFileCreateSync LockFileCreateWrite LockFileReCheckDataDirRead LogicalRewriteCheckpointSync
LogicalRewriteMappingSync LogicalRewriteMappingWrite LogicalRewriteSync LogicalRewriteTruncate LogicalRewriteWrite
RelationMapRead RelationMapReplace RelationMapWrite ReorderBufferRead ReorderBufferWrite ReorderLogicalMappingRead
ReplicationSlotRead ReplicationSlotRestoreSync ReplicationSlotSync ReplicationSlotWrite SLRUFlushSync SLRURead SLRUSync
SLRUWrite SnapbuildRead SnapbuildSync SnapbuildWrite TimelineHistoryFileSync TimelineHistoryFileWrite
TimelineHistoryRead TimelineHistorySync TimelineHistoryWrite TwophaseFileRead TwophaseFileSync TwophaseFileWrite
VersionFileSync VersionFileWrite WALSenderTimelineHistoryRead WALBootstrapSync WALBootstrapWrite WALCopyRead WALCopySync
WALCopyWrite WALInitSync WALInitWrite WALRead WALSync WALSyncMethodAssign WALWrite`)
	ioWaits17 = strings.Fields(`BasebackupRead BasebackupSync BasebackupWrite BufFileRead BufFileTruncate BufFileWrite
ControlFileRead ControlFileSync ControlFileSyncUpdate ControlFileWrite ControlFileWriteUpdate CopyFileRead CopyFileWrite
DataFileExtend DataFileFlush DataFileImmediateSync DataFilePrefetch DataFileRead DataFileSync DataFileTruncate
DataFileWrite DsmAllocate DsmFillZeroWrite LockFileAddToDataDirRead LockFileAddToDataDirSync LockFileAddToDataDirWrite
LockFileCreateRead LockFileCreateSync LockFileCreateWrite LockFileReCheckDataDirRead LogicalRewriteCheckpointSync
LogicalRewriteMappingSync LogicalRewriteMappingWrite LogicalRewriteSync LogicalRewriteTruncate LogicalRewriteWrite
RelationMapRead RelationMapReplace RelationMapWrite ReorderBufferRead ReorderBufferWrite ReorderLogicalMappingRead
ReplicationSlotRead ReplicationSlotRestoreSync ReplicationSlotSync ReplicationSlotWrite SlruFlushSync SlruRead SlruSync
SlruWrite SnapbuildRead SnapbuildSync SnapbuildWrite TimelineHistoryFileSync TimelineHistoryFileWrite
TimelineHistoryRead TimelineHistorySync TimelineHistoryWrite TwophaseFileRead TwophaseFileSync TwophaseFileWrite
VersionFileSync VersionFileWrite WalsenderTimelineHistoryRead WalBootstrapSync WalBootstrapWrite WalCopyRead WalCopySync
WalCopyWrite WalInitSync WalInitWrite WalRead WalSummaryRead WalSummaryWrite WalSync WalSyncMethodAssign WalWrite`)
)

// Every I/O wait of 15, 16 and 17 is classed on its own (not by the
// fallback on its name), and into a class of storage.
func TestEveryIOWaitHasAClass(t *testing.T) {
	w := newWaitClassifier()
	for _, v := range []struct {
		version string
		events  []string
		count   int
	}{{"15", ioWaits15, 74}, {"16", ioWaits16, 75}, {"17", ioWaits17, 77}} {
		if len(v.events) != v.count {
			t.Errorf("PostgreSQL %s lists %d I/O waits here, want %d", v.version, len(v.events), v.count)
		}
		for _, e := range v.events {
			key := strings.ToLower("IO:" + e)
			c, ok := w.events[key]
			if !ok {
				t.Errorf("PostgreSQL %s's IO:%s has no class of its own", v.version, e)
				continue
			}
			if !c.IO() {
				t.Errorf("PostgreSQL %s's IO:%s is classed %s, not a wait for storage", v.version, e, c)
			}
		}
	}
}

func TestWaitClasses(t *testing.T) {
	tests := []struct {
		typ, event string
		want       results.DBTimeClass
	}{
		{"", "", results.DBTimeCPU},
		{"IO", "DataFileRead", results.DBTimeIORead},
		{"IO", "DataFilePrefetch", results.DBTimeIORead},
		{"IO", "SLRURead", results.DBTimeIORead},
		{"IO", "SlruRead", results.DBTimeIORead},
		{"IO", "WALRead", results.DBTimeIORead},
		{"IO", "DataFileWrite", results.DBTimeIOWrite},
		{"IO", "DataFileExtend", results.DBTimeIOWrite},
		{"IO", "WALWrite", results.DBTimeIOWrite},
		{"IO", "WalWrite", results.DBTimeIOWrite},
		{"IO", "WALInitWrite", results.DBTimeIOWrite},
		{"IO", "BufFileWrite", results.DBTimeIOWrite},
		{"IO", "WALSync", results.DBTimeIOSync},
		{"IO", "WalSync", results.DBTimeIOSync},
		{"IO", "DataFileSync", results.DBTimeIOSync},
		{"IO", "DataFileFlush", results.DBTimeIOSync},
		{"IO", "DataFileImmediateSync", results.DBTimeIOSync},
		{"IO", "SLRUFlushSync", results.DBTimeIOSync},
		{"IO", "WALSyncMethodAssign", results.DBTimeIOSync},
		// A later version's I/O wait, by its name.
		{"IO", "SomeFutureSync", results.DBTimeIOSync},
		{"IO", "SomeFutureRead", results.DBTimeIORead},
		{"IO", "SomeFutureThing", results.DBTimeIOWrite},
		// Group commit: waiting for another session's WAL flush.
		{"LWLock", "WALWrite", results.DBTimeIOSync},
		{"LWLock", "WALWriteLock", results.DBTimeIOSync},
		{"LWLock", "WALInsert", results.DBTimeLock},
		{"LWLock", "BufferContent", results.DBTimeLock},
		{"LWLock", "LockManager", results.DBTimeLock},
		{"Lock", "transactionid", results.DBTimeLock},
		{"Lock", "tuple", results.DBTimeLock},
		{"Lock", "advisory", results.DBTimeLock},
		{"BufferPin", "BufferPin", results.DBTimeLock},
		{"Timeout", "SpinDelay", results.DBTimeLock},
		{"Timeout", "RegisterSyncRequest", results.DBTimeIOSync},
		{"IPC", "BufferIO", results.DBTimeIORead},
		{"IPC", "SyncRep", results.DBTimeOther},
		{"IPC", "ProcArrayGroupUpdate", results.DBTimeOther},
		{"Timeout", "PgSleep", results.DBTimeOther},
		{"Client", "ClientRead", results.DBTimeOther},
		{"Extension", "Extension", results.DBTimeOther},
		{"Activity", "WalWriterMain", results.DBTimeOther},
		{"SomeFutureType", "Anything", results.DBTimeOther},
	}
	w := newWaitClassifier()
	for _, tt := range tests {
		if got := w.class([]byte(tt.typ), []byte(tt.event)); got != tt.want {
			t.Errorf("%s:%s is %s, want %s", tt.typ, tt.event, got, tt.want)
		}
	}
}

// A sample's waits are classed without allocating: ten samples a second
// of every session must not feed the garbage collector.
func TestWaitClassAllocatesNothing(t *testing.T) {
	w := newWaitClassifier()
	typ, event, lwlock, walwrite := []byte("IO"), []byte("DataFileRead"), []byte("LWLock"), []byte("WALWrite")
	if n := testing.AllocsPerRun(100, func() {
		w.class(typ, event)
		w.class(lwlock, walwrite)
		w.class(typ, []byte("SomeFutureSync"))
		w.class(nil, nil)
	}); n != 0 {
		t.Errorf("classing four waits allocated %v times", n)
	}
}

func TestActivityQueryLeavesOutWritersItCannotSee(t *testing.T) {
	for _, writers := range []bool{true, false} {
		q := activityQuery(writers)
		if strings.Contains(q, "walwriter") != writers || !strings.Contains(q, "'client backend'") {
			t.Errorf("writers %v: query %s", writers, q)
		}
	}
}

// dbTimeNow reads the instance's seconds of database time per class,
// waiting for the sampler's first sample.
func dbTimeNow(t *testing.T, in *Instance) map[results.DBTimeClass]float64 {
	t.Helper()
	for {
		m, err := in.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m[results.DBTimeCPU.Counter()]; ok {
			secs := map[results.DBTimeClass]float64{}
			for _, c := range results.DBTimeClasses() {
				secs[c] = m[c.Counter()]
			}
			return secs
		}
		time.Sleep(server.ActivityInterval) // the sampler's next sample has no event to wait on
	}
}

// dbTimeOf runs statement over and over in sessions of their own until the
// sampler has counted need seconds in class, and returns the seconds each
// class gained meanwhile. It fails when the rest of database time grows
// twenty times that without the class reaching it.
func dbTimeOf(t *testing.T, in *Instance, class results.DBTimeClass, need float64, sessions int, statement string) map[results.DBTimeClass]float64 {
	t.Helper()
	before := dbTimeNow(t, in)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var g errgroup.Group
	for range sessions {
		g.Go(func() error {
			for ctx.Err() == nil {
				if _, err := in.DB().ExecContext(ctx, statement); err != nil && ctx.Err() == nil {
					return err
				}
			}
			return nil
		})
	}
	gained := map[results.DBTimeClass]float64{}
	for {
		after := dbTimeNow(t, in)
		total := 0.0
		for _, c := range results.DBTimeClasses() {
			gained[c] = after[c] - before[c]
			total += gained[c]
		}
		if gained[class] >= need {
			break
		}
		if total > 20*need {
			cancel()
			t.Fatalf("%q in %d sessions: %.1f s of database time without %.1f s in %s: %v", statement, sessions, total, need, class, gained)
		}
		time.Sleep(server.ActivityInterval)
	}
	cancel()
	if err := g.Wait(); err != nil {
		t.Fatalf("%q: %v", statement, err)
	}
	return gained
}

// mostly checks that class holds more than half of the database time gained.
func mostly(t *testing.T, what string, class results.DBTimeClass, gained map[results.DBTimeClass]float64) {
	t.Helper()
	total := 0.0
	for _, s := range gained {
		total += s
	}
	t.Logf("%s: %.2f s of database time, %.0f %% %s (%v)", what, total, 100*gained[class]/total, class, gained)
	if gained[class] <= total/2 {
		t.Errorf("%s: %s holds %.2f of %.2f s of database time, want more than half: %v", what, class, gained[class], total, gained)
	}
}

// A real server's sessions are counted in the class of what they do:
// computing is cpu, sleeping is other, waiting for an advisory lock
// another session holds is lock. The sampling ends with the instance.
func TestDBTimeClassesOfARealLoad(t *testing.T) {
	in := start(t, realEngine(t), engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{})

	// A set-returning function in the select list is computed row by row,
	// without a temporary file to wait for.
	mostly(t, "counting in 2 sessions", results.DBTimeCPU,
		dbTimeOf(t, in, results.DBTimeCPU, 1, 2, "SELECT count(*) FROM (SELECT generate_series(1, 2000000)) s"))
	mostly(t, "pg_sleep in 3 sessions", results.DBTimeOther,
		dbTimeOf(t, in, results.DBTimeOther, 1, 3, "SELECT pg_sleep(30)"))

	ctx := context.Background()
	holder, err := in.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, "SELECT pg_advisory_lock(42)"); err != nil {
		t.Fatal(err)
	}
	// The holder sits idle in its session: only the waiters make database time.
	mostly(t, "3 sessions waiting for an advisory lock", results.DBTimeLock,
		dbTimeOf(t, in, results.DBTimeLock, 1, 3, "SELECT pg_advisory_lock(42)"))
	if _, err := holder.ExecContext(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
		t.Fatal(err)
	}
	holder.Close()

	stop(t, in)
	select {
	case <-in.dbTime.Done():
	default:
		t.Error("the sampling of database time outlived the instance")
	}
}

// Commits on a disk capped at 50 write IOPS wait for their WAL to be
// synced, their own sync (IO:WALSync) or another session's that covers
// them (LWLock:WALWrite): most of the database time is io_sync.
func TestDBTimeOfCommitsOnACappedDiskIsLogSync(t *testing.T) {
	host := iolimit.SystemHost(target.HostFS().Sys)
	testenv.Require(t, os.Geteuid() == 0 && (host.V1Blkio != "" || host.V2 != ""), "root and cgroup block-I/O control", testenv.HowRootAndBlkio)
	e := realEngine(t)
	tg, err := target.Create(filepath.Join(smallfs.MountDisk(t, 512<<20), "data"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := tg.Storage(target.HostFS())
	if err != nil || len(st.Physical) == 0 {
		t.Fatalf("the loop disk has no block device behind it: %+v %v", st, err)
	}
	var devices []string
	for _, d := range st.Physical {
		devices = append(devices, d.DevNumber)
	}
	g, err := host.Create("pgdbtime-"+strconv.Itoa(os.Getpid()), devices, iolimit.Limits{WriteIOPS: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	in := start(t, e, engine.Placement{Data: tg}, engine.Options{Wrap: g.Wrap, RunAs: g.AllowUser})
	if _, err := in.DB().Exec("CREATE TABLE commits (id int, pad text)"); err != nil {
		t.Fatal(err)
	}
	mostly(t, "commits in 4 sessions at 50 write IOPS", results.DBTimeIOSync,
		dbTimeOf(t, in, results.DBTimeIOSync, 2, 4, "INSERT INTO commits VALUES (1, repeat('x', 500))"))
	stop(t, in)
}

// On an existing server, a role without pg_read_all_stats still sees its
// own sessions, but not the server's writers: that is said, not counted as
// zeros. DBIO_DB_TIME=off turns the sampling off, and says so.
func TestDBTimeOfAnExternalServer(t *testing.T) {
	e := realEngine(t)
	ctx := context.Background()
	srv := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Transport: "tcp"})
	cfg, err := pgx.ParseConfig(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.DB().ExecContext(ctx, "CREATE ROLE plain LOGIN CREATEDB PASSWORD 'plain-pw'"); err != nil {
		t.Fatal(err)
	}
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=plain password=plain-pw dbname=postgres sslmode=disable", cfg.Port)
	external := func(getenv func(string) string) (*Instance, []string) {
		t.Helper()
		var notices []string
		ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: dsn, Database: "dbio_plain", Getenv: getenv,
			Notice: func(msg string) { notices = append(notices, msg) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ext.Stop(ctx) })
		return ext.(*Instance), notices
	}

	ext, notices := external(nil)
	if len(notices) != 1 || !strings.Contains(notices[0], `GRANT pg_read_all_stats TO "plain"`) || !strings.Contains(notices[0], "checkpointer") {
		t.Errorf("notices %q, want one saying the writers are left out and how to count them", notices)
	}
	mostly(t, "pg_sleep in 2 sessions of a role without pg_read_all_stats", results.DBTimeOther,
		dbTimeOf(t, ext, results.DBTimeOther, 0.5, 2, "SELECT pg_sleep(30)"))
	if err := ext.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	if _, err := srv.DB().ExecContext(ctx, "GRANT pg_read_all_stats TO plain"); err != nil {
		t.Fatal(err)
	}
	if ext, notices = external(nil); len(notices) != 0 || !ext.dbTimeWriters {
		t.Errorf("with pg_read_all_stats: notices %q, want none, and the writers sampled", notices)
	}

	off := func(k string) string {
		if k == server.ActivityEnv {
			return "off"
		}
		return ""
	}
	ext, _ = external(off)
	m, err := ext.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m[results.DBTimeCPU.Counter()]; ok || ext.dbTime != nil {
		t.Errorf("%s=off: database time still sampled (%v)", server.ActivityEnv, m)
	}
	if !strings.Contains(strings.Join(ext.Info().Notes, "\n"), server.ActivityEnv+"=off") {
		t.Errorf("%s=off: notes %q do not say database time was not sampled", server.ActivityEnv, ext.Info().Notes)
	}
	stop(t, srv)
}

// BenchmarkDBTimeSample measures one sample as the sampler takes it, ten a
// second, on a server with 64 sessions connected, 8 of them in a
// statement: the CPU it costs dbio's process and the server's backend that
// answers it (pg_stat_activity copies every session's state out of shared
// memory), per sample, and both together in % of one core at 10 Hz.
func BenchmarkDBTimeSample(b *testing.B) {
	e := realEngine(b)
	ctx := context.Background()
	inst, err := e.Start(ctx, engine.Placement{Data: reachableTarget(b, "data")}, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Stop(ctx)
	in := inst.(*Instance)
	busy, cancel := context.WithCancel(ctx)
	var g errgroup.Group
	defer func() {
		cancel()
		g.Wait()
	}()
	for i := range 64 {
		c, err := pgx.Connect(ctx, in.DSN())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		if i < 8 {
			g.Go(func() error {
				_, err := c.Exec(busy, "SELECT pg_sleep(3600)")
				return err
			})
		}
	}
	p, err := connectActivityProbe(ctx, in.DSN(), activityQuery(true))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	sessions := make([]float64, len(results.DBTimeClasses()))
	if err := p.Sample(ctx, sessions); err != nil { // the statement's plan is cached from here on
		b.Fatal(err)
	}
	clientBefore, serverBefore := processCPU(b, "self"), processCPU(b, strconv.Itoa(int(p.conn.PID())))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		clear(sessions)
		if err := p.Sample(ctx, sessions); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	client := (processCPU(b, "self") - clientBefore) / time.Duration(b.N)
	server := (processCPU(b, strconv.Itoa(int(p.conn.PID()))) - serverBefore) / time.Duration(b.N)
	if sessions[p.index[results.DBTimeOther]] < 8 {
		b.Errorf("the last sample found %v sessions by class, want at least the 8 sleeping ones", sessions)
	}
	b.ReportMetric(float64(client.Microseconds()), "client-µs/sample")
	b.ReportMetric(float64(server.Microseconds()), "server-µs/sample")
	// CPU per second of wall time at ten samples a second, in % of one core.
	b.ReportMetric(float64(10*(client+server))/float64(time.Second)*100, "pct_core_at_10Hz")
}

// processCPU is the user and system time a process (a /proc entry: a PID
// or "self") has used.
func processCPU(b *testing.B, proc string) time.Duration {
	b.Helper()
	stat, err := os.ReadFile(filepath.Join("/proc", proc, "stat"))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's name, which may hold spaces: utime
	// and stime are the 14th and 15th of the line, in clock ticks.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%s/stat: %v %v", proc, err1, err2)
	}
	const userHZ = 100 // the kernel's USER_HZ, fixed on Linux
	return time.Duration(utime+stime) * time.Second / userHZ
}

// TestEngineTransactionsLeaveOutDBIOsOwn: with no user connected, the
// server's count of transactions in dbio's database still climbs with
// dbio's own reads of its counters, and the transactions ended that dbio
// reports leave those out, so that engine TPM counts only what the users
// ran. The server publishes a session's counts up to a second late; the
// test asks it to publish them (pg_stat_force_next_flush, on the counters'
// pool) before the first and the last read, so that the comparison is
// exact but for a count the pool's other connection publishes late.
func TestEngineTransactionsLeaveOutDBIOsOwn(t *testing.T) {
	in := start(t, realEngine(t), engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{})
	defer stop(t, in)
	ctx := context.Background()
	read := func() (raw, ended float64) {
		t.Helper()
		m, err := in.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m["xact_commit"] + m["xact_rollback"], m[engine.TransactionsEnded]
	}
	publish := func() {
		t.Helper()
		if _, err := in.StatsDB().ExecContext(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
			t.Fatal(err)
		}
	}
	read() // the first read starts the sampling of database time
	publish()
	raw0, ended0 := read()
	const reads = 20
	for range reads {
		read()
	}
	publish()
	raw1, ended1 := read()
	rawRise, endedRise := raw1-raw0, ended1-ended0
	t.Logf("no users: the server counted %.0f transactions, dbio reports %.0f", rawRise, endedRise)
	if rawRise < 2*reads {
		t.Fatalf("the server counted %.0f transactions over %d reads of the counters: they no longer run in dbio's database as transactions, and nothing is left to take out", rawRise, reads)
	}
	// The one transaction no read ran is the test's own request to
	// publish; the request publishes only its own connection's counts, and
	// the pool may run a read on another, so a count can come a second
	// late: one either way is allowed. Counting the reads would leave 40
	// or more; taking out one read too many, less than none.
	if endedRise < 0 || endedRise > 2 {
		t.Errorf("dbio reports %.0f transactions ended with no users (the server counted %.0f), want the test's 1, give or take a count published late: dbio's own reads are counted, or more than they are taken out", endedRise, rawRise)
	}
}
