package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dbio/internal/engine"
	"dbio/internal/engine/mysql"
	"dbio/internal/engine/postgres"
	"dbio/internal/engine/sqlite"
	"dbio/internal/execx"
	"dbio/internal/target"
)

// TestNoisyTenantsFitMemory: a noisy-neighbour run's tenants are judged by
// the memory each tenant's server needs as the engine counts it, so that a
// buffer pool sized with --setting is counted as the server will size it,
// and a refusal names the numbers and the fix. The engines' own memory
// needs are used as they are, without a server running.
func TestNoisyTenantsFitMemory(t *testing.T) {
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	maria := mysql.New("mariadb", execx.Real{}, "/proc")
	const available = 4 << 30
	tests := []struct {
		name    string
		eng     engine.Engine
		opts    engine.Options
		tenants int
		// want is in the refusal; empty: the tenants fit.
		want []string
	}{
		{name: "postgres defaults fit", eng: pg, tenants: 2},
		{name: "postgres shared_buffers setting counted", eng: pg, tenants: 2,
			opts: engine.Options{Settings: map[string]string{"shared_buffers": "8GB"}},
			want: []string{"2 tenants need about", "of shared_buffers (setting)", "is available", "fewer tenants", "smaller --buffer-pool or buffer pool setting"}},
		{name: "postgres setting over a small --buffer-pool", eng: pg, tenants: 2,
			opts: engine.Options{BufferPool: 64 << 20, Settings: map[string]string{"shared_buffers": "3GB"}},
			want: []string{"of shared_buffers (setting)"}},
		{name: "postgres --buffer-pool counted", eng: pg, tenants: 2,
			opts: engine.Options{BufferPool: 3 << 30},
			want: []string{"2 tenants need about", "of shared_buffers +"}},
		{name: "mariadb innodb_buffer_pool_size setting counted", eng: maria, tenants: 3,
			opts: engine.Options{Settings: map[string]string{"innodb_buffer_pool_size": "2G"}},
			want: []string{"3 tenants need about", "(setting)", "fewer tenants"}},
		{name: "mariadb defaults fit", eng: maria, tenants: 3},
		{name: "an external server is not this host's memory", eng: pg, tenants: 2,
			opts: engine.Options{DSN: "postgres://u@db/x", Settings: map[string]string{"shared_buffers": "8GB"}}},
		{name: "sqlite's cache counted when given", eng: sqlite.Engine{}, tenants: 2,
			opts: engine.Options{BufferPool: 3 << 30},
			want: []string{"2 tenants need about", "of cache"}},
		{name: "sqlite without a cache size fits", eng: sqlite.Engine{}, tenants: 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := errors.Join(tenantsMemoryProblems(tc.eng, tc.opts, 9, tc.tenants, available)...)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("not refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
		})
	}
	// Memory not known: nothing to judge by.
	if err := errors.Join(tenantsMemoryProblems(pg, engine.Options{BufferPool: 64 << 30}, 9, 2, 0)...); err != nil {
		t.Errorf("refused with memory unknown: %v", err)
	}
}

// TestPreflightRefusesTenantsThatDoNotFit: the tenants' memory is judged by
// Preflight, which writes nothing, with each tenant's own users.
func TestPreflightRefusesTenantsThatDoNotFit(t *testing.T) {
	proc := t.TempDir()
	if err := os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pg := postgres.New("postgres", execx.Real{}, "/proc")
	plan := Plan{Setup: Setup{Kind: "tpcc", Engine: pg, DataPath: t.TempDir(), ResultsBase: t.TempDir()},
		Body: Noisy{Tenants: 2, Users: 8, Quiet: time.Second}}
	sys := target.SysFS{Proc: proc, Sys: "/sys"}
	plan.EngineOptions = engine.Options{Settings: map[string]string{"shared_buffers": "8GB"}}
	err := Preflight(plan, sys)
	if !IsBadInput(err) || !strings.Contains(err.Error(), "2 tenants need about") || !strings.Contains(err.Error(), "4.0 GiB is available") {
		t.Fatalf("tenants of 8 GB each on a host with 4 GiB available: %v", err)
	}
	// A suite's preflight, before its first run, judges them the same way.
	suite := Suite{Name: "s", Results: t.TempDir(), Runs: []PlannedRun{{Name: "noisy", Kind: "tpcc", Plan: &plan}}}
	if err := suite.Preflight(sys); err == nil || !strings.Contains(err.Error(), "run noisy: 2 tenants need about") {
		t.Fatalf("a suite's tenants of 8 GB each on a host with 4 GiB available: %v", err)
	}
	plan.EngineOptions = engine.Options{}
	if err := Preflight(plan, sys); err != nil && strings.Contains(err.Error(), "tenants need") {
		t.Fatalf("tenants with default buffer pools refused: %v", err)
	}
	if err := suite.Preflight(sys); err != nil && strings.Contains(err.Error(), "tenants need") {
		t.Fatalf("a suite's tenants with default buffer pools refused: %v", err)
	}
}
