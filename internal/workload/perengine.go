package workload

import (
	"fmt"
	"sort"
	"strings"

	"dbio/internal/engine"
)

// PerEngine holds what a workload needs for each engine (its SQL dialect, a
// backend), registered at init by engine name and looked up from an
// instance, so that no workload switches on an engine's name.
type PerEngine[T any] struct {
	workload string
	m        map[string]T
}

// NewPerEngine returns an empty table for the named workload (used in messages).
func NewPerEngine[T any](workload string) *PerEngine[T] {
	return &PerEngine[T]{workload: workload, m: map[string]T{}}
}

// Register adds v for engine; two registrations for one engine are a programming error.
func (p *PerEngine[T]) Register(engine string, v T) {
	if _, dup := p.m[engine]; dup {
		panic(p.workload + ": registered twice for engine " + engine)
	}
	p.m[engine] = v
}

// For returns what was registered for the instance's engine; the error
// names the engines that are supported.
func (p *PerEngine[T]) For(inst engine.Instance) (T, error) {
	name := inst.Info().Engine
	v, ok := p.m[name]
	if !ok {
		names := make([]string, 0, len(p.m))
		for n := range p.m {
			names = append(names, n)
		}
		sort.Strings(names)
		return v, fmt.Errorf("%s does not support engine %q (supported: %s)", p.workload, name, strings.Join(names, ", "))
	}
	return v, nil
}
