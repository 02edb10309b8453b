package runner

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/workload"
	"dbio/internal/workload/tpcc"
)

// A step needing more connections than the server accepts is refused
// before it starts, naming the setting to change and the numbers; a pool
// the server can take, or an engine without a server, passes.
func TestConnectionProblems(t *testing.T) {
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	pool := func(n int) *int { return &n }
	paced := func(w int, p *int) workload.Workload {
		return tpcc.New(tpcc.Config{Warehouses: w, KeyingThinking: true, Pool: p})
	}
	tests := []struct {
		name     string
		eng      engine.Engine
		settings map[string]string
		w        workload.Workload
		users    []int
		openLoop bool
		want     []string // substrings of the one problem; none for no problem
		refuse   []string // substrings the problem must not hold
	}{
		{name: "a pool the managed server takes", eng: pg, w: paced(100, pool(32)), users: []int{1000}},
		{name: "a pool beyond dbio's max_connections", eng: pg, w: paced(40, pool(400)), users: []int{400},
			want: []string{"--pool 400", "and the 2 dbio reads the server's counters and its database time on make 402", "max_connections 300", "at most 298", "--setting max_connections=402"}},
		{name: "terminals with a connection each", eng: pg, w: paced(40, nil), users: []int{400},
			want: []string{"--pool 400", "max_connections 300"}},
		{name: "a pool beyond a max_connections setting", eng: pg, settings: map[string]string{"max_connections": "100"}, w: paced(20, pool(120)), users: []int{200},
			want: []string{"--pool 120", "max_connections 100, as the max_connections setting gives it"}},
		{name: "back-to-back users", eng: pg, w: tpcc.New(tpcc.Config{Warehouses: 10}), users: []int{8, 400},
			want: []string{"--users: 400 users", "make 402", "--keying-thinking with --pool"}},
		{name: "an open-loop run sets no pool aside", eng: pg, w: paced(100, pool(32)), users: []int{1000}, openLoop: true,
			want: []string{"--pool 32: an open-loop run", "1000 terminals", "max_connections 300"}},
		{name: "an engine without a server", eng: sqlite.Engine{}, w: paced(100, nil), users: []int{1000}},
		{name: "more users than SQLite serves", eng: sqlite.Engine{}, w: tpcc.New(tpcc.Config{Warehouses: 1}), users: []int{1025},
			want:   []string{"--users: 1025 users with a connection each make 1025 connections", "SQLite's ceiling", "--keying-thinking with --pool)"},
			refuse: []string{"dbio reads", "--setting", "max_connections="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := engine.Options{Settings: tc.settings}
			errs := connectionProblems(flagForm, tc.eng, o, userLoadOf(tc.w, tc.users, tc.openLoop, tc.eng, o))
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			got := strings.Join(all, "\n")
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("refused: %s", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems %q lack %q", got, w)
				}
			}
			for _, r := range tc.refuse {
				if strings.Contains(got, r) {
					t.Errorf("problems %q hold %q", got, r)
				}
			}
		})
	}
}

// An existing server's max_connections (--dsn) is asked before anything is
// written: a run needing more connections is refused as bad input, with
// the numbers and the fix, before its results directory or the database
// it would load exists.
func TestExternalServerLimitCheckedBeforeAnythingIsWritten(t *testing.T) {
	server := servers.Instance(t, "postgres")
	base := t.TempDir()
	plan := Plan{Setup: Setup{
		Name: "ext", Kind: "tpcc", Command: []string{"dbio", "tpcc"},
		Engine:        postgres.New("postgres", execx.Real{}, "/proc"),
		EngineOptions: engine.Options{DSN: server.DSN(), Database: "dbio_ext_refused", Fresh: true},
		Workload:      tpcc.New(tpcc.Config{Warehouses: 1}), ResultsBase: base,
	}, Body: Steps{Users: []int{2, 400}, Step: time.Second}}
	_, err := Run(context.Background(), plan, Env{Out: io.Discard})
	if !IsBadInput(err) {
		t.Fatalf("Run = %v, want a refusal as bad input", err)
	}
	for _, want := range []string{"--users: 400 users", "make 402", "max_connections 300, as the server at --dsn says", "--keying-thinking with --pool", "raise the server's max_connections to at least 402 in its own configuration"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("the refused run wrote %d entries in its results directory's parent", len(entries))
	}
	var exists bool
	if err := server.DB().QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'dbio_ext_refused')").Scan(&exists); err != nil || exists {
		t.Errorf("the refused run created its database on the server (exists %v, %v)", exists, err)
	}
}

// askedPools is a TPC-C workload that counts how often each step's pool
// is asked for.
type askedPools struct {
	*tpcc.Workload
	asked map[int]int
}

func (w askedPools) Pool(terminals int) int {
	w.asked[terminals]++
	return w.Workload.Pool(terminals)
}

// The preflight asks the workload for each user count's pool once, and
// every check reads that answer: the connections counted, the open-loop
// check and the problem's wording agree by construction.
func TestPoolAskedOncePerUserCount(t *testing.T) {
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	pool := 400
	for _, openLoop := range []bool{false, true} {
		w := askedPools{tpcc.New(tpcc.Config{Warehouses: 40, KeyingThinking: true, Pool: &pool}), map[int]int{}}
		users := []int{200, 400, 200, 800}
		errs := connectionProblems(flagForm, pg, engine.Options{}, userLoadOf(w, users, openLoop, pg, engine.Options{}))
		if len(errs) == 0 {
			t.Errorf("open loop %v: a pool of 400 on a server taking 300 passed", openLoop)
		}
		for _, u := range []int{200, 400, 800} {
			if w.asked[u] != 1 {
				t.Errorf("open loop %v: the pool of %d terminals asked %d times, want once", openLoop, u, w.asked[u])
			}
		}
	}
}

// A server dbio manages is given room for every connection the plan's
// steps open, so a climb past 300 users runs; a max_connections setting
// the user gives still binds, and a server of the user's own (a DSN) is
// asked its own limit.
func TestManagedServerRoomForEveryUser(t *testing.T) {
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	tests := []struct {
		name      string
		o         engine.Options
		wantConns int
		refused   bool
	}{
		{"dbio's own server", engine.Options{}, 498, false},
		{"a max_connections setting", engine.Options{Settings: map[string]string{"max_connections": "300"}}, 498, true},
		{"the caller's pool bound", engine.Options{MaxConns: 600}, 600, false},
		{"a server of the user's own", engine.Options{DSN: "postgres://bench@127.0.0.1/postgres"}, 0, false},
	}
	many := Plan{Setup: Setup{Engine: pg, Workload: tpcc.New(tpcc.Config{Warehouses: 10})}, Body: Steps{Users: []int{100000}}}.withConnectionRoom()
	if errs := connectionProblems(flagForm, pg, many.EngineOptions, many.userLoad()); many.EngineOptions.MaxConns != managedConnectionsMost ||
		len(errs) != 1 || !strings.Contains(errs[0].Error(), "--setting max_connections=100002") {
		t.Errorf("100000 users: pool bound %d, problems %v; want %d and a refusal naming the setting", many.EngineOptions.MaxConns, errs, managedConnectionsMost)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plan{Setup: Setup{Engine: pg, EngineOptions: tt.o, Workload: tpcc.New(tpcc.Config{Warehouses: 10})},
				Body: Steps{Users: []int{8, 496}}}
			p = p.withConnectionRoom()
			if p.EngineOptions.MaxConns != tt.wantConns {
				t.Errorf("pool bound %d, want %d", p.EngineOptions.MaxConns, tt.wantConns)
			}
			errs := connectionProblems(flagForm, pg, p.EngineOptions, p.userLoad())
			if refused := len(errs) > 0; refused != tt.refused {
				t.Errorf("refused %v (%v), want %v", refused, errs, tt.refused)
			}
		})
	}
}
