package workload

import (
	"fmt"
	"sort"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/registry"
)

// PerEngine holds what a workload needs for each engine (its SQL dialect, a
// backend), registered at init by engine name and looked up from an
// instance, so that no workload switches on an engine's name.
type PerEngine[T any] struct {
	workload string
	byEngine *registry.Registry[T]
}

// NewPerEngine returns an empty table for the named workload (used in messages).
func NewPerEngine[T any](workload string) *PerEngine[T] {
	return &PerEngine[T]{workload: workload, byEngine: registry.New[T](workload + "'s part for engine")}
}

// Register adds v for engine; two registrations for one engine are a programming error.
func (p *PerEngine[T]) Register(engine string, v T) { p.byEngine.Add(engine, v) }

// For returns what was registered for the instance's engine; the error
// names the engines that are supported.
func (p *PerEngine[T]) For(inst engine.Instance) (T, error) {
	name := inst.Info().Engine
	v, ok := p.byEngine.Get(name)
	if !ok {
		names := p.byEngine.Names()
		sort.Strings(names)
		return v, fmt.Errorf("%s does not support engine %q (supported: %s)", p.workload, name, strings.Join(names, ", "))
	}
	return v, nil
}
