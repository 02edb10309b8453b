package fio

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Profile is a named, documented plan of fio jobs (four-corners, sqlio...).
// A Registry holds them (BuiltinProfiles); dbio looks them up by name.
type Profile interface {
	// Name is what users type after --profile.
	Name() string
	// Describe says what the profile measures and why, for --help and docs/disk.md.
	Describe() string
	// DefaultRuntime is the length of one point when --runtime is not given.
	DefaultRuntime() time.Duration
	// Points plans the measurements of one target (or one drive group). It
	// rejects settings the profile has no use for, so that a flag is never
	// silently ignored.
	Points(c Config) ([]Point, error)
}

// DefaultSizer is implemented by profiles that copy a tool with a working
// file of its own size (CrystalDiskMark's 1 GiB): without --size the file
// is that size instead of dbio's rule.
type DefaultSizer interface {
	DefaultSize() int64
}

// Summarizer is implemented by profiles whose points together say what fio
// found (how long preconditioning took, when rounds settled); the text
// goes to the terminal and into run.json's notes.
type Summarizer interface {
	Summarize(c Config, points []PointResult) []string
}

// Registry maps profile names to profiles.
type Registry struct {
	mu       sync.RWMutex
	profiles map[string]Profile
}

// NewRegistry returns an empty registry; tests build their own.
func NewRegistry() *Registry { return &Registry{profiles: map[string]Profile{}} }

// Register adds p under its name. Two profiles with one name are a programming error.
func (r *Registry) Register(p Profile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.profiles[p.Name()]; dup {
		panic(fmt.Sprintf("fio profile %q registered twice", p.Name()))
	}
	r.profiles[p.Name()] = p
}

// Lookup finds a profile; the error lists the profiles there are.
func (r *Registry) Lookup(name string) (Profile, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if p, ok := r.profiles[strings.ToLower(strings.TrimSpace(name))]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown fio profile %q: use one of %s", name, strings.Join(r.namesLocked(), ", "))
}

// Names lists the registered profiles in order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.profiles))
	for n := range r.profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
