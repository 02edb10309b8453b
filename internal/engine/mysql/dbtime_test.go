package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"dbio/internal/engine"
	"dbio/internal/iolimit"
	"dbio/internal/results"
	"dbio/internal/smallfs"
	"dbio/internal/target"
	"dbio/internal/testenv"
)

func TestStateClass(t *testing.T) {
	for _, c := range []struct {
		state string
		want  results.DBTimeClass
	}{
		{"", results.DBTimeCPU},
		{"Sending data", results.DBTimeCPU},
		{"Updating", results.DBTimeCPU},
		{"Executing", results.DBTimeCPU},
		{"starting", results.DBTimeCPU},
		{"Writing to net", results.DBTimeCPU},
		{"Updating reference tables", results.DBTimeCPU},
		{"Commit", results.DBTimeIOSync},
		{"Commit implicit", results.DBTimeIOSync},
		{"Updating status", results.DBTimeIOSync},
		{"Starting cleanup", results.DBTimeIOSync},
		{"waiting for handler commit", results.DBTimeIOSync},
		{"Waiting for table metadata lock", results.DBTimeLock},
		{"Waiting for table level lock", results.DBTimeLock},
		{"Waiting for global read lock", results.DBTimeLock},
		{"Waiting for backup lock", results.DBTimeLock},
		{"Waiting for table flush", results.DBTimeLock},
		{"System lock", results.DBTimeLock},
		{"Table lock", results.DBTimeLock},
		{"Reading from net", results.DBTimeOther},
		{"User sleep", results.DBTimeOther},
		{"Waiting for semi-sync ACK from slave", results.DBTimeOther},
		{"Waiting for prior transaction to commit", results.DBTimeOther},
	} {
		if got := stateClass(appendLower(nil, []byte(c.state))); got != c.want {
			t.Errorf("state %q: %s, want %s", c.state, got, c.want)
		}
	}
}

// classes are database time's counters, or their changes, by class.
type classes map[results.DBTimeClass]float64

func (c classes) total() float64 {
	var s float64
	for _, v := range c {
		s += v
	}
	return s
}

func (c classes) String() string {
	var parts []string
	for _, cl := range results.DBTimeClasses() {
		parts = append(parts, fmt.Sprintf("%s %.2f s", cl, c[cl]))
	}
	return strings.Join(parts, ", ")
}

// dbTimeStats reads the instance's counters; ok says they hold database
// time (the sampler has its first figures).
func dbTimeStats(t *testing.T, in *Instance) (classes, map[string]float64, bool) {
	t.Helper()
	m, err := in.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := classes{}
	for _, cl := range results.DBTimeClasses() {
		v, ok := m[cl.Counter()]
		if !ok {
			return nil, m, false
		}
		c[cl] = v
	}
	return c, m, true
}

// waitDBTime reads the counters until until holds for their change since
// base (nil: until the sampler gives its first figures, which it returns).
func waitDBTime(t *testing.T, in *Instance, base classes, until func(d classes) bool) (classes, map[string]float64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, m, ok := dbTimeStats(t, in)
		if ok {
			d := classes{}
			for cl, v := range c {
				d[cl] = v - base[cl]
			}
			if base == nil || until(d) {
				return d, m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("database time did not get there in 2 minutes: %v (figures: %v)", c, ok)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sessionRunning waits until a session of the server runs a statement
// containing what.
func sessionRunning(t *testing.T, db *sql.DB, what string) int64 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var id int64
		err := db.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()", "%"+what+"%").Scan(&id)
		if err == nil {
			return id
		}
		if err != sql.ErrNoRows {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session runs %q", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sample takes one sample of the processlist as the sampler does.
func sample(t *testing.T, in *Instance) classes {
	t.Helper()
	ctx := context.Background()
	p, err := connectActivityProbe(ctx, in.admin, in.Facts.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sessions := make([]float64, len(results.DBTimeClasses()))
	if err := p.Sample(ctx, sessions); err != nil {
		t.Fatal(err)
	}
	c := classes{}
	for i, cl := range results.DBTimeClasses() {
		c[cl] = sessions[i]
	}
	return c
}

// endlessCPU is a statement that keeps a CPU busy until it is killed.
const endlessCPU = "SELECT BENCHMARK(1000000000000, MD5('dbio db time'))"

func TestDBTimeOnARealServer(t *testing.T) {
	e := realEngine(t)
	in := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Settings: smallRedo})
	ctx := context.Background()
	db := in.DB()
	// The test watches the server on a connection without a database, which
	// the sampler does not count.
	mon, err := openAdmin(in.admin)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	if len(in.Facts.Notes) > 0 {
		for _, n := range in.Facts.Notes {
			if strings.Contains(n, "database time") {
				t.Errorf("a managed server's database time lacks something: %s", n)
			}
		}
	}

	t.Run("a CPU-heavy statement is cpu", func(t *testing.T) {
		// The same statement in another database is not the benchmark's.
		if _, err := db.Exec("CREATE DATABASE IF NOT EXISTS other"); err != nil {
			t.Fatal(err)
		}
		otherCfg := in.admin.Clone()
		otherCfg.DBName = "other"
		other, err := openAdmin(otherCfg)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		base, _ := waitDBTime(t, in, nil, nil)
		var g errgroup.Group
		for _, pool := range []*sql.DB{db, other} {
			g.Go(func() error {
				_, err := pool.Exec(endlessCPU)
				return err
			})
		}
		var ids []int64
		for _, name := range []string{in.Facts.Database, "other"} {
			var id int64
			deadline := time.Now().Add(time.Minute)
			for mon.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'SELECT BENCHMARK%'", name).Scan(&id) != nil {
				if time.Now().After(deadline) {
					t.Fatalf("the statement in %s does not run", name)
				}
				time.Sleep(20 * time.Millisecond)
			}
			ids = append(ids, id)
		}
		if got := sample(t, in); got[results.DBTimeCPU] != 1 || got.total() != 1 {
			t.Errorf("one sample while the benchmark's database and another run a CPU-heavy statement: %v; want 1 session, on cpu", got)
		}
		d, _ := waitDBTime(t, in, base, func(d classes) bool { return d.total() >= 1 })
		for _, id := range ids {
			if _, err := mon.Exec("KILL QUERY " + strconv.FormatInt(id, 10)); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		t.Logf("while the statement ran: %v", d)
		if d[results.DBTimeCPU] < 0.9*d.total() {
			t.Errorf("a CPU-heavy statement made %v; want at least 90 %% cpu", d)
		}
	})

	t.Run("a session waiting for a row lock is lock", func(t *testing.T) {
		if _, err := db.Exec("CREATE TABLE locked (id int PRIMARY KEY, v int) ENGINE=InnoDB; INSERT INTO locked VALUES (1, 0)"); err != nil {
			t.Fatal(err)
		}
		holder, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		if _, err := holder.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := holder.ExecContext(ctx, "UPDATE locked SET v = v + 1 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		base, _ := waitDBTime(t, in, nil, nil)
		waited := make(chan error, 1)
		go func() {
			_, err := db.Exec("UPDATE locked SET v = v + 10 WHERE id = 1 /* the waiter */")
			waited <- err
		}()
		sessionRunning(t, mon, "the waiter")
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			var waits int
			if err := mon.QueryRow("SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = ?", rowLockMetric).Scan(&waits); err != nil {
				t.Fatal(err)
			}
			if waits == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the waiter never waits for the row lock")
			}
		}
		if got := sample(t, in); got[results.DBTimeLock] != 1 || got.total() != 1 {
			t.Errorf("one sample while a session waits for a row lock: %v; want 1 session, on lock", got)
		}
		d, _ := waitDBTime(t, in, base, func(d classes) bool { return d[results.DBTimeLock] >= 1 })
		if _, err := holder.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if err := <-waited; err != nil {
			t.Fatal(err)
		}
		t.Logf("while the waiter waited: %v", d)
		if d[results.DBTimeLock] < 0.8*d.total() {
			t.Errorf("a session waiting for a row lock made %v; want at least 80 %% lock", d)
		}
	})

	t.Run("the sampler of an external instance stops with it", func(t *testing.T) {
		// A sampler's connection is dbio's without a database; every other
		// connection of dbio but the test's own has one.
		probes := func() int {
			var n int
			if err := mon.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB IS NULL AND USER = ? AND ID <> CONNECTION_ID()", account).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := probes()
		ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: in.DSN(), Database: "dbio_external"})
		if err != nil {
			t.Fatal(err)
		}
		x := ext.(*Instance)
		waitDBTime(t, x, nil, nil)
		if n := probes(); n != before+1 {
			t.Errorf("while an external instance samples, the server has %d sampler connections, want %d", n, before+1)
		}
		if err := ext.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-x.dbTime.activity.Done():
		case <-time.After(time.Minute):
			t.Fatal("the sampling goroutine outlived the instance's Stop")
		}
		for deadline := time.Now().Add(time.Minute); probes() != before; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the sampler's connection outlived the instance's Stop")
			}
		}
	})

	t.Run("an external server says what it does not show", func(t *testing.T) {
		if _, err := mon.Exec("SET GLOBAL innodb_monitor_disable = '" + rowLockMetric + "'"); err != nil {
			t.Fatal(err)
		}
		defer mon.Exec("SET GLOBAL innodb_monitor_enable = '" + rowLockMetric + "'")
		var notices []string
		ext, err := e.Start(ctx, engine.Placement{}, engine.Options{DSN: in.DSN(), Database: "dbio_external",
			Notice: func(msg string) { notices = append(notices, msg) }})
		if err != nil {
			t.Fatal(err)
		}
		defer ext.Stop(ctx)
		if len(notices) != 1 || !strings.Contains(notices[0], "row lock") || !strings.Contains(notices[0], "innodb_monitor_enable") {
			t.Errorf("notices %q, want one that row-lock waits count as CPU and how to see them", notices)
		}
	})
	stop(t, in)
}

// A server without performance_schema (MariaDB's default) is sampled all
// the same, and its instance says what it cannot see.
func TestDBTimeWithoutPerformanceSchema(t *testing.T) {
	e := realEngine(t)
	settings := map[string]string{"performance_schema": "OFF"}
	for k, v := range smallRedo {
		settings[k] = v
	}
	in := start(t, e, engine.Placement{Data: reachableTarget(t, "data")}, engine.Options{Settings: settings})
	const want = "database time: performance_schema is off on this server, so InnoDB's data file reads count as CPU and its data file writes and syncs are not seen; start the server with performance_schema=ON and performance-schema-instrument='wait/io/file/innodb/%=ON' to see them"
	var said bool
	for _, n := range in.Facts.Notes {
		said = said || n == want
	}
	if !said {
		t.Errorf("notes %q, want %q", in.Facts.Notes, want)
	}
	d, _ := waitDBTime(t, in, nil, nil)
	t.Logf("first figures: %v", d)
	stop(t, in)
}

// Commits on storage capped at a few write IOPS are io_sync, and the
// sessions' wait for them is recorded as log syncs per commit (MariaDB
// 10.8 and later do not time the redo log). The disk is a loop device of
// its own.
func TestDBTimeCommitsOnSlowStorageAreIOSync(t *testing.T) {
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
	g, err := host.Create("mariadbdbtime-"+strconv.Itoa(os.Getpid()), devices, iolimit.Limits{WriteIOPS: 50})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	in := start(t, e, engine.Placement{Data: tg}, engine.Options{Settings: smallRedo, Wrap: g.Wrap, RunAs: g.AllowUser})
	db := in.DB()
	if _, err := db.Exec("CREATE TABLE commits (id int PRIMARY KEY, pad varchar(600)) ENGINE=InnoDB"); err != nil {
		t.Fatal(err)
	}
	base, before := waitDBTime(t, in, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var writers errgroup.Group
	for s := range 4 {
		writers.Go(func() error {
			for i := 0; ctx.Err() == nil; i++ {
				tx, err := db.BeginTx(ctx, nil)
				if err == nil {
					_, err = tx.Exec("INSERT INTO commits VALUES (?, REPEAT('x', 500))", s*1000000+i)
				}
				if err == nil {
					err = tx.Commit()
				}
				if err != nil && ctx.Err() == nil {
					return err
				}
			}
			return nil
		})
	}
	d, after := waitDBTime(t, in, base, func(d classes) bool { return d.total() >= 3 })
	cancel()
	if err := writers.Wait(); err != nil {
		t.Fatal(err)
	}
	stop(t, in)
	t.Logf("4 sessions committing at 50 write IOPS: %v", d)
	if d[results.DBTimeIOSync] < 0.5*d.total() {
		t.Errorf("commits at 50 write IOPS made %v; want at least half io_sync", d)
	}
	ops, wait := results.DBWaitSync.Counters()
	commits, ms := after[ops]-before[ops], after[wait]-before[wait]
	t.Logf("%.0f commits waited %.0f ms for the log: %.1f ms each", commits, ms, ms/commits)
	// At 50 write IOPS a commit's log write waits about 20 ms, and no
	// commit waits longer than the time the sessions spent in all.
	if commits <= 0 || ms/commits < 5 || ms > 1000*d.total() {
		t.Errorf("%.0f commits waited %.0f ms for the log sync: want commits, each waiting 5 ms or more, in all no more than the database time %.1f s", commits, ms, d.total())
	}
}

// BenchmarkDBTimeSample measures one sample as the sampler takes it, ten a
// second, on a server with 64 sessions connected, 8 of them in a
// statement: the CPU it costs dbio's process and the server's thread that
// answers it (SHOW PROCESSLIST copies every session's state), per sample,
// and both together in % of one core at 10 Hz.
func BenchmarkDBTimeSample(b *testing.B) {
	e := realEngine(b)
	ctx := context.Background()
	inst, err := e.Start(ctx, engine.Placement{Data: reachableTarget(b, "data")}, engine.Options{Settings: smallRedo})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Stop(ctx)
	in := inst.(*Instance)
	busy, cancel := context.WithCancel(ctx)
	var g errgroup.Group
	var conns []*sql.Conn
	defer func() {
		// The sleeping statements end first: a connection closes only
		// once its statement has returned.
		cancel()
		g.Wait()
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 64 {
		c, err := in.DB().Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			b.Fatal(err)
		}
		if i < 8 {
			g.Go(func() error {
				c.ExecContext(busy, "SELECT SLEEP(3600)") // ends when busy does
				return nil
			})
		}
	}
	p, err := connectActivityProbe(ctx, in.admin, in.Facts.Database)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var tid int
	if err := p.conn.QueryRowContext(ctx, "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()").Scan(&tid); err != nil {
		b.Fatal(err)
	}
	thread := filepath.Join(strconv.Itoa(in.ServerPID()), "task", strconv.Itoa(tid))
	sessions := make([]float64, len(results.DBTimeClasses()))
	for sessions[p.index[results.DBTimeOther]] < 8 {
		clear(sessions)
		if err := p.Sample(ctx, sessions); err != nil {
			b.Fatal(err)
		}
	}
	clientBefore, serverBefore := threadCPU(b, "self"), threadCPU(b, thread)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		clear(sessions)
		if err := p.Sample(ctx, sessions); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	client := (threadCPU(b, "self") - clientBefore) / time.Duration(b.N)
	server := (threadCPU(b, thread) - serverBefore) / time.Duration(b.N)
	if sessions[p.index[results.DBTimeOther]] != 8 {
		b.Errorf("the last sample found %v sessions by class, want the 8 sleeping ones", sessions)
	}
	b.ReportMetric(float64(client.Microseconds()), "client-µs/sample")
	b.ReportMetric(float64(server.Microseconds()), "server-µs/sample")
	// CPU per second of wall time at ten samples a second, in % of one core.
	b.ReportMetric(float64(10*(client+server))/float64(time.Second)*100, "pct_core_at_10Hz")
}

// threadCPU is the user and system time a process or thread (a /proc
// entry: "self", PID or PID/task/TID) has used.
func threadCPU(b *testing.B, proc string) time.Duration {
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
