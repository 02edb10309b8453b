package tpcc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/metrics"
	"dbio/internal/testenv"
)

// procUserHZ is the unit of /proc/<pid>/stat times: USER_HZ, 100 on every
// Linux architecture dbio runs on.
const procUserHZ = 100

// serverCPU is the CPU time, user and system, the server's processes have
// used: the live ones (PIDs gives the server and its children) plus the
// children the server has already reaped (PostgreSQL's ended backends and
// workers), which the kernel adds to the reaping parent's cutime and cstime.
func serverCPU(procs engine.Processes) (time.Duration, error) {
	pids := procs.PIDs()
	if len(pids) == 0 {
		return 0, fmt.Errorf("the server has no processes to read")
	}
	var ticks uint64
	for i, pid := range pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			if os.IsNotExist(err) && i > 0 {
				continue // a child that ended since PIDs listed it
			}
			return 0, err
		}
		// Fields after the command's closing parenthesis, from field 3 (state):
		// utime is field 14, stime 15, cutime 16, cstime 17.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 15 {
			return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
		}
		last := 12 // stime
		if i == 0 {
			last = 14 // cstime: the root also carries its reaped children
		}
		for _, v := range f[11 : last+1] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
			}
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / procUserHZ, nil
}

// serverCounters are MariaDB's own cumulative counts of the work it did,
// for per-transaction deltas: round trips (Questions), statements including
// those inside procedures (Queries), and row operations (Handler_*).
// PostgreSQL has no equivalent that is current at the end of a short run
// (its backends flush their statistics at most once a second).
func serverCounters(ctx context.Context, engineName string, inst engine.Instance) (map[string]float64, error) {
	if engineName != "mariadb" {
		return nil, nil
	}
	rows, err := inst.DB().QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Queries',
		'Handler_read_key', 'Handler_read_next', 'Handler_read_rnd_next', 'Handler_update', 'Handler_write', 'Handler_delete')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]float64{}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, err
		}
		m[name] = v
	}
	return m, rows.Err()
}

// serverCPUUsers is the number of concurrent users: enough to keep the
// server busy on two cores without measuring mostly lock waits.
const serverCPUUsers = 4

// BenchmarkServerCPU reports the database server's CPU time per committed
// TPC-C transaction (all its processes, from /proc) for each transaction
// type and for the standard mix, on PostgreSQL and MariaDB, with the
// server's own counts of statements and row operations per transaction.
// Each b.N is transactions, run by serverCPUUsers users of two warehouses.
//
// TPCC_BASELINE_MARIADB and TPCC_BASELINE_POSTGRES may name another
// version of sql/mysql.sql or sql/postgres.sql (same call signatures): each
// case then also runs with those procedures installed, one after the
// other on the same server, so that the two are compared in the same
// conditions ("procs=baseline" and "procs=current").
func BenchmarkServerCPU(b *testing.B) {
	servers := map[string]*testServer{"postgres": pgServer, "mariadb": mariaServer}
	for _, e := range testEngines() {
		srv := servers[e.name]
		if srv == nil {
			continue
		}
		b.Run(e.name, func(b *testing.B) {
			testenv.RequireEngine(b, e.name)
			w, inst := e.loaded(b, 2)
			managed, err := srv.start()
			if err != nil {
				b.Fatal(err)
			}
			procs, ok := managed.(engine.Processes)
			if !ok {
				b.Fatalf("%s: the test server does not list its processes", e.name)
			}
			variants := []struct{ name, sql string }{{"current", ""}}
			if path := os.Getenv("TPCC_BASELINE_" + strings.ToUpper(e.name)); path != "" {
				text, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				variants = append([]struct{ name, sql string }{{"baseline", string(text)}}, variants...)
			}
			install := func(text string) {
				var err error
				switch {
				case e.name == "postgres" && text == "":
					err = pgInstall(context.Background(), inst, pgFunctions)
				case e.name == "postgres":
					err = pgInstall(context.Background(), inst, text)
				case text == "":
					err = myInstall(context.Background(), inst, myProcedures)
				default:
					err = myInstall(context.Background(), inst, text)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			// The shared server keeps this version's procedures for other tests.
			b.Cleanup(func() { install("") })
			for _, tx := range append([]int{-1}, TxNewOrder, TxPayment, TxOrderStatus, TxDelivery, TxStockLevel) {
				name := "mix"
				if tx >= 0 {
					name = txNames[tx]
				}
				for _, v := range variants {
					b.Run(name+"/procs="+v.name, func(b *testing.B) {
						install(v.sql)
						runServerCPU(b, w, inst, e.name, procs, tx)
					})
				}
			}
		})
	}
}

// runServerCPU runs b.N transactions of type tx (-1: the standard mix)
// spread over serverCPUUsers users and reports the server's work per
// committed transaction.
func runServerCPU(b *testing.B, w *Workload, inst engine.Instance, engineName string, procs engine.Processes, tx int) {
	ctx := context.Background()
	col := metrics.NewCollector(w.TxTypes())
	sessions := make([]*session, serverCPUUsers)
	for u := range sessions {
		s, err := w.NewSession(ctx, inst, u, col.NewRecorder())
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sessions[u] = s.(*session)
	}
	var skipped atomic.Int64
	next := func(s *session) error {
		switch tx {
		case -1:
			return s.Next(ctx)
		case TxDelivery:
			// A district without an undelivered order is cheap to skip: the
			// figure would flatter the procedure once the orders run out.
			in := &deliveryIn{wID: s.wID, carrierID: s.r.uniform(1, 10), date: time.Now()}
			err := s.exec.delivery(ctx, in)
			skipped.Add(int64(in.skipped))
			return err
		}
		if err := s.prepare(tx)(ctx, s.exec); err != nil && err != errRollback {
			return err
		}
		return nil
	}
	// Warm the connections and the server's caches and procedure caches;
	// Deliveries fewer, as each uses up ten undelivered orders.
	warm := 20
	if tx == TxDelivery {
		warm = 3
	}
	for _, s := range sessions {
		for range warm {
			if err := next(s); err != nil {
				b.Fatal(err)
			}
		}
	}
	col.Tick()
	col.Reset()
	before, err := serverCounters(ctx, engineName, inst)
	if err != nil {
		b.Fatal(err)
	}
	cpu0, err := serverCPU(procs)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	errs := make(chan error, len(sessions))
	for u, s := range sessions {
		n := b.N / len(sessions)
		if u < b.N%len(sessions) {
			n++
		}
		go func() {
			for range n {
				if err := next(s); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range sessions {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu1, err := serverCPU(procs)
	if err != nil {
		b.Fatal(err)
	}
	after, err := serverCounters(ctx, engineName, inst)
	if err != nil {
		b.Fatal(err)
	}
	// A single type's b.N includes New-Order's 1 % of intended rollbacks,
	// which do most of a New-Order's work; the mix counts through the
	// recorders, and only its commits divide the work.
	committed := int64(b.N)
	if tx < 0 {
		col.Tick()
		committed = 0
		for _, c := range col.StepTotals() {
			if c.Failed > 0 {
				b.Fatalf("%d transactions failed", c.Failed)
			}
			committed += c.Committed
		}
	}
	if n := skipped.Load(); n > 0 {
		b.Fatalf("deliveries found %d districts without an undelivered order: the dataset ran out, run fewer (-benchtime)", n)
	}
	if committed == 0 {
		b.Fatal("no transaction committed")
	}
	b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(committed), "server-cpu-µs/tx")
	for name, v := range after {
		b.ReportMetric((v-before[name])/float64(committed), name+"/tx")
	}
}
