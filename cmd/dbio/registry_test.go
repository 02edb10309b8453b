package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/pflag"

	"dbio/internal/engine/engines"
	"dbio/internal/execx"
	"dbio/internal/target"
)

// TestEveryWorkloadHasACommandAndItsSuiteKeys: each registered workload is
// a command, and each flag its definition binds is also a key of its suite
// table (with "_" for "-"), so flags and suite files set the same settings.
func TestEveryWorkloadHasACommandAndItsSuiteKeys(t *testing.T) {
	// Reusing a dataset is a choice for one command line, not for a study.
	commandOnly := map[string]bool{"reuse": true}
	app := &App{Exec: execx.Real{}, SysFS: target.HostFS()}
	app.Engines = engines.New(engines.Deps{Exec: app.Exec, ProcRoot: app.SysFS.Proc})
	root := newRoot(app)
	for _, def := range workloads().All() {
		t.Run(def.Name, func(t *testing.T) {
			if c, _, err := root.Find([]string{def.Name}); err != nil || c.Name() != def.Name {
				t.Fatalf("no command %s: %v", def.Name, err)
			}
			s := def.New()
			fs := pflag.NewFlagSet(def.Name, pflag.ContinueOnError)
			def.BindFlags(s, fs)
			fs.VisitAll(func(f *pflag.Flag) {
				if commandOnly[f.Name] {
					return
				}
				value := f.DefValue
				if value == "" && f.Value.Type() == "int" {
					// A count left unset until given (tpcc's --pool): a
					// value it takes.
					value = "1"
				}
				if t := f.Value.Type(); t == "string" || t == "duration" {
					value = fmt.Sprintf("%q", value)
				}
				key := strings.ReplaceAll(f.Name, "-", "_")
				dec := toml.NewDecoder(bytes.NewReader([]byte(key + " = " + value + "\n"))).DisallowUnknownFields()
				if err := dec.Decode(s.Table()); err != nil {
					t.Errorf("--%s has no suite key %s: %v", f.Name, key, err)
				}
			})
		})
	}
}
