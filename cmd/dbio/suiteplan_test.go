package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"dbio/internal/engine/engines"
)

// TestSuiteRunResolvesToTheCommandsPlan: a suite's run and the command
// line that asks for the same run resolve to one plan: the same users,
// timing, target, engine options and run.json config, so that compare
// reads a suite's run and a command's alike.
func TestSuiteRunResolvesToTheCommandsPlan(t *testing.T) {
	var out bytes.Buffer
	app := testApp(&out)
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	dir := t.TempDir()
	text := strings.ReplaceAll(`name = "one"
[targets.data]
path = "%DIR%"
[engines.e]
engine = "sqlite"
buffer_pool = "64MB"
[workloads.w]
kind = "tpcc"
warehouses = 2
seed = 7
users = [1, 3]
rampup = "2s"
step = "5s"
[[runs]]
workload = "w"
engine = "e"
data = "data"
`, "%DIR%", dir)
	fromSuite := onlySuitePlan(t, app, text, false)
	fromFlags := commandPlan(t, app, "--engine", "sqlite", "--target", dir, "--users", "1,3", "--ramp-time", "2s", "--runtime", "5s",
		"--warehouses", "2", "--seed", "7", "--buffer-pool", "64MB")

	configs := make([]string, 2)
	for i, p := range []any{fromSuite.Config, fromFlags.Config} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		configs[i] = string(b)
	}
	if configs[0] != configs[1] {
		t.Errorf("run.json config differs:\nsuite: %s\nflags: %s", configs[0], configs[1])
	}
	if !slices.Equal(fromSuite.Users, fromFlags.Users) || fromSuite.RampUp != fromFlags.RampUp || fromSuite.Step != fromFlags.Step ||
		fromSuite.DataPath != fromFlags.DataPath || fromSuite.Kind != fromFlags.Kind || fromSuite.SpaceNeeded != fromFlags.SpaceNeeded {
		t.Errorf("plans differ:\nsuite: users %v, %s + %s, %s, %s, %d bytes\nflags: users %v, %s + %s, %s, %s, %d bytes",
			fromSuite.Users, fromSuite.RampUp, fromSuite.Step, fromSuite.DataPath, fromSuite.Kind, fromSuite.SpaceNeeded,
			fromFlags.Users, fromFlags.RampUp, fromFlags.Step, fromFlags.DataPath, fromFlags.Kind, fromFlags.SpaceNeeded)
	}
	so, fo := fromSuite.EngineOptions, fromFlags.EngineOptions
	if so.BufferPool != fo.BufferPool || so.Database != fo.Database || so.Transport != fo.Transport || so.Fresh != fo.Fresh || so.DSN != fo.DSN {
		t.Errorf("engine options differ:\nsuite: %+v\nflags: %+v", so, fo)
	}
	if fromSuite.Engine.Name() != fromFlags.Engine.Name() {
		t.Errorf("engines %s and %s", fromSuite.Engine.Name(), fromFlags.Engine.Name())
	}
}
