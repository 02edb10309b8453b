package workload

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"dbio/internal/registry"
	"dbio/internal/results"
)

// Definition is one database workload as dbio offers it, in the manner of
// cockroachdb's pkg/workload Meta: everything the command line, a suite
// file, a dry run and a report need to know of it comes from here, so that
// adding a workload touches its own package and the one list cmd/dbio
// builds its Registry from.
type Definition struct {
	// Name is the workload's command, its kind in a suite file and in
	// run.json: "tpcc".
	Name string
	// Title names it in report headings: "TPC-C".
	Title string
	// Help is its command's help text.
	Help Help
	// RunDefaults are its defaults for the flags every workload command
	// shares (users, ramp-up, step).
	RunDefaults RunDefaults
	// Loading words, for its command, the flags of the data it loads
	// (--seed, --load-workers, --reuse), which every workload has.
	Loading LoadingHelp
	// New returns the workload's own settings at their defaults, to be bound
	// to flags or decoded from a suite file's [workloads.x] table.
	New func() Settings
}

// Help is a workload command's help text.
type Help struct {
	Short, Long, Example string
}

// RunDefaults are a workload command's defaults for the shared run flags.
type RunDefaults struct {
	// Users is the --users sequence, e.g. "1,2,3,5,8".
	Users  string
	RampUp time.Duration
	Step   time.Duration
	// OwnSteps, when set, says the workload steps its users itself and which
	// of its flags set them: --users is then hidden and refused.
	OwnSteps string
}

// Settings are one workload's own parameters, from its flags or its suite
// table: the same typed values either way.
type Settings interface {
	// BindFlags adds a flag for each of the workload's own settings to
	// fs, the current values as defaults (Definition.BindFlags adds the
	// Loading flags every workload has beside them).
	BindFlags(fs *pflag.FlagSet)
	// LoadingSettings is the Loading the workload's Config embeds (which
	// implements it): the settings of the data every workload loads.
	LoadingSettings() *Loading
	// Table is what a suite's [workloads.x] table decodes into (a pointer
	// to a struct with toml tags); its keys are the flags' names with "_"
	// for "-".
	Table() any
	// Validate reports every bad setting at once, each a *SettingError.
	Validate() []error
	// Steps are a run's user counts, given the users asked for (a stepping
	// workload draws its own), and how a plan shows them.
	Steps(given []int) (users []int, label string)
	// Estimate is what loading the dataset takes on the engine named
	// (its rate table's row; the slowest engine's for one it has none
	// for), for a dry run and a run's expected time.
	Estimate(engine string) Estimate
	// Build makes the workload for one run; Build (the function) adds
	// what its Loading decides.
	Build(o BuildOptions) (Built, error)
}

// BindFlags adds s's flags to fs: the workload's own, and the Loading
// flags every workload has, in the definition's words.
func (d Definition) BindFlags(s Settings, fs *pflag.FlagSet) {
	s.BindFlags(fs)
	s.LoadingSettings().BindFlags(fs, d.Loading)
}

// Build makes the workload s sets for one run, with what every workload's
// Loading decides of it: whether data loaded before is kept, and the seed.
func Build(s Settings, o BuildOptions) (Built, error) {
	l := s.LoadingSettings()
	l.settle()
	b, err := s.Build(o)
	if err != nil {
		return Built{}, err
	}
	b.Reuse, b.Seed = l.Reuse, l.Seed
	return b, nil
}

// Estimate is a workload's expected load time and the space a dry run shows.
type Estimate struct {
	Load  time.Duration
	Space uint64
	// How says what Load rests on: the scale and the rate taken, and
	// where that rate was measured.
	How string
	// ThroughputCV and LatencyCV are how much the workload's headline
	// throughput and a transaction type's percentile usually vary from
	// second to second (standard deviation over mean), by which a
	// measurement until precise is expected to end; VariationHow says
	// where they were measured.
	ThroughputCV, LatencyCV float64
	VariationHow            string
	// Check is how long the workload's consistency checks take after a
	// run's steps, and CheckHow what that rests on; zero where it was
	// not measured (a dry run then does not count them).
	Check    time.Duration
	CheckHow string
}

// BuildOptions are what a run adds to a workload's settings.
type BuildOptions struct {
	// Users are the user counts asked for (--users or a suite's users).
	Users      []int
	SkipChecks bool
}

// Built is a workload ready to run, with what a run plan needs of it.
type Built struct {
	Workload Workload
	// SpaceNeeded is the free space one dataset needs on the data target.
	SpaceNeeded uint64
	// Users are the run's steps (Settings.Steps).
	Users []int
	// Reuse keeps a dataset already loaded with the same identity (Loading's,
	// set by Build).
	Reuse bool
	// Ceiling, when set, ends a stepping run at a response-time ceiling
	// (analysis.Ceiling stops it, draws its run-level figures and words
	// the answer).
	Ceiling *results.Ceiling
	// Stepping, when set, is recorded at the top of run.json's config,
	// beside the users it draws (AS3AP's start, add and ceiling).
	Stepping any
	// Recorded is the configuration run.json records under the workload's name.
	Recorded any
	// Seed is the run's random seed (Loading's --seed, recorded in
	// Recorded, set by Build): an open-loop run's Poisson schedule draws
	// from it too, so that one recorded seed gives the same data, inputs
	// and arrivals again.
	Seed uint64
}

// SettingError is one bad setting, named by its flag; a suite names it by
// its key, the flag's name with "_" for "-".
type SettingError struct {
	Flag  string
	Value any
	Msg   string
}

// Invalid reports a bad value of the setting set by --flag.
func Invalid(flag string, value any, format string, a ...any) *SettingError {
	return &SettingError{Flag: flag, Value: value, Msg: fmt.Sprintf(format, a...)}
}

// Error is the command line's form: "--warehouses 0: must be ...".
func (e *SettingError) Error() string {
	return fmt.Sprintf("--%s %s: %s", e.Flag, e.value(), e.Msg)
}

// Key is the setting's key in a suite table.
func (e *SettingError) Key() string { return strings.ReplaceAll(e.Flag, "-", "_") }

// InTable is a suite file's form, following its key: `0: must be ...`,
// with the other settings its message names as their keys too ("raise
// --warehouses to 5" reads "raise warehouses to 5").
func (e *SettingError) InTable() string {
	msg := flagInMessage.ReplaceAllStringFunc(e.Msg, func(f string) string {
		return strings.ReplaceAll(strings.TrimPrefix(f, "--"), "-", "_")
	})
	return e.value() + ": " + msg
}

// flagInMessage matches a flag a setting's message names: "--keying-thinking".
var flagInMessage = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

func (e *SettingError) value() string {
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(e.Value)
}

// Registry is the workloads a dbio binary offers, in the order its commands
// and messages list them.
type Registry struct {
	*registry.Registry[Definition]
}

// NewRegistry holds defs; two definitions of one name are a programming error.
func NewRegistry(defs ...Definition) *Registry {
	r := &Registry{registry.New[Definition]("workload")}
	for _, d := range defs {
		r.Add(d.Name, d)
	}
	return r
}

// Title names a workload kind for headings; a kind no definition has (a
// disk run, "quick") is its own title.
func (r *Registry) Title(kind string) string {
	if d, ok := r.Get(kind); ok {
		return d.Title
	}
	return kind
}

// Flag is the flag of kind's command that sets the setting run.json
// records as key ("load_workers" is --load-workers), so that a report says
// a setting in the words the user typed; ok is false when no flag sets it
// (a value the workload derives, such as sysbench's point_selects from its
// --workload) or no workload is kind.
func (r *Registry) Flag(kind, key string) (flag string, ok bool) {
	d, found := r.Get(kind)
	if !found {
		return "", false
	}
	fs := pflag.NewFlagSet(kind, pflag.ContinueOnError)
	d.BindFlags(d.New(), fs)
	name := strings.ReplaceAll(key, "_", "-")
	if fs.Lookup(name) == nil {
		return "", false
	}
	return name, true
}

// StepsOwner is implemented by settings that, as set, may draw their own
// users (TPC-C's paced terminals): OwnSteps says which of the workload's
// flags set them, and a --users (or a suite's users) given beside is
// refused; "" runs the users asked for.
type StepsOwner interface {
	OwnSteps() string
}

// GivenUsers, embedded in a workload's settings, runs the users asked for,
// one step per count: every workload but a stepping one.
type GivenUsers struct{}

// Steps are the users asked for.
func (GivenUsers) Steps(given []int) ([]int, string) { return given, UserSteps(given) }

// UserSteps labels a plain user sequence: "1,2,4,8".
func UserSteps(users []int) string {
	s := make([]string, len(users))
	for i, u := range users {
		s[i] = fmt.Sprint(u)
	}
	return strings.Join(s, ",")
}

// Duration is a setting given as a duration: "100ms" in a suite table, as
// on the command line.
type Duration time.Duration

// UnmarshalText reads a suite table's "100ms".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like 100ms, 30s or 5m", b)
	}
	*d = Duration(v)
	return nil
}
