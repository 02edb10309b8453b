// Package registry holds what dbio offers by name (its engines, fio
// profiles and workloads, a workload's part for each engine): each
// registered once, listed in the order it was registered, and found by the
// name a user types, with the one message for a name there is not.
package registry

import (
	"fmt"
	"strings"
)

// Registry holds values of one kind by name. It is filled before it is
// shared (registering is not safe beside readers); reading is.
type Registry[T any] struct {
	kind   string
	names  []string
	byName map[string]T
}

// New returns an empty registry of things of the kind its messages name
// ("engine", "fio profile").
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, byName: map[string]T{}}
}

// Add registers v under name, listed after those registered before. A name
// registered twice, or one Lookup could never find as it is written (upper
// case, surrounding space), is a programming error.
func (r *Registry[T]) Add(name string, v T) {
	if _, dup := r.byName[name]; dup {
		panic(fmt.Sprintf("%s %q registered twice", r.kind, name))
	}
	if typed(name) != name {
		panic(fmt.Sprintf("%s %q: register it in lower case without surrounding space, as Lookup reads what users type", r.kind, name))
	}
	r.byName[name] = v
	r.names = append(r.names, name)
}

// Get returns what is registered under exactly name, for the names dbio
// itself holds (a suite's workload kind, an instance's engine).
func (r *Registry[T]) Get(name string) (T, bool) {
	v, ok := r.byName[name]
	return v, ok
}

// Lookup finds name as a user typed it (a flag's value), its case and
// surrounding space aside; the error lists the names there are.
func (r *Registry[T]) Lookup(name string) (T, error) {
	if v, ok := r.byName[typed(name)]; ok {
		return v, nil
	}
	var none T
	return none, fmt.Errorf("unknown %s %q: use one of %s", r.kind, name, strings.Join(r.names, ", "))
}

// Names lists the registered names in the order they were registered.
func (r *Registry[T]) Names() []string { return append([]string(nil), r.names...) }

// All lists the registered values in the order they were registered.
func (r *Registry[T]) All() []T {
	all := make([]T, len(r.names))
	for i, n := range r.names {
		all[i] = r.byName[n]
	}
	return all
}

// typed is a name as Lookup reads it.
func typed(name string) string { return strings.ToLower(strings.TrimSpace(name)) }
