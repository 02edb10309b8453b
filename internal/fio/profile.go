package fio

import (
	"time"

	"dbio/internal/registry"
	"dbio/internal/results"
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
	Points(c Config) ([]results.FioPlan, error)
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
	Summarize(c Config, points []results.FioPoint) []string
}

// Registry is the fio profiles dbio offers, by name, listed in the order
// they are registered.
type Registry struct {
	*registry.Registry[Profile]
}

// NewRegistry returns an empty registry; tests build their own.
func NewRegistry() *Registry { return &Registry{registry.New[Profile]("fio profile")} }

// Register adds p under its name. Two profiles with one name are a programming error.
func (r *Registry) Register(p Profile) { r.Add(p.Name(), p) }
