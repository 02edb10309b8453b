package engine

import (
	"fmt"
	"strings"
)

// ManagedOption is an option only a server dbio starts on a target can
// honour, named by its command-line flag without the dashes. An existing
// server (--dsn) has its own configuration, memory and disks, none of them
// dbio's to set.
type ManagedOption string

// The managed-only options.
const (
	BufferPoolOption   ManagedOption = "buffer-pool"
	ServerMemoryOption ManagedOption = "server-memory"
	SettingOption      ManagedOption = "setting"
	LimitOption        ManagedOption = "limit"
)

// ManagedOnlyError is a managed-only option asked of an existing server: the
// one rule, for the command line's flags, a suite's keys and an engine's
// external mode alike. Like workload.SettingError it knows the option's
// flag and its suite key, and says the problem in the words of either.
type ManagedOnlyError struct {
	Option ManagedOption
}

// Flag is the option as the command line writes it: "--buffer-pool".
func (e *ManagedOnlyError) Flag() string { return "--" + string(e.Option) }

// Key is the option's key in a suite file: "buffer_pool", and "settings"
// for the table that holds an engine's settings.
func (e *ManagedOnlyError) Key() string {
	if e.Option == SettingOption {
		return "settings"
	}
	return strings.ReplaceAll(string(e.Option), "-", "_")
}

// Error is the command line's form: "--buffer-pool: applies to a server
// dbio runs on a target, not to --dsn: ...".
func (e *ManagedOnlyError) Error() string { return e.Flag() + ": " + e.say("--dsn") }

// InTable is a suite file's form, following its key: "applies to a server
// dbio runs on a target, not to dsn: ...".
func (e *ManagedOnlyError) InTable() string { return e.say("dsn") }

// say is the problem and its fix, dsn named as the run names it.
func (e *ManagedOnlyError) say(dsn string) string {
	var fix string
	switch e.Option {
	case BufferPoolOption:
		fix = "size the existing server's buffer pool in its own configuration, or drop " + dsn
	case ServerMemoryOption:
		fix = "dbio cannot cap the memory of a server it did not start; drop one of them"
	case SettingOption:
		fix = "change the existing server's configuration, or drop " + dsn
	case LimitOption:
		fix = "dbio cannot throttle the storage of a server it did not start; drop one of them"
	default:
		fix = "drop one of them"
	}
	return fmt.Sprintf("applies to a server dbio runs on a target, not to %s: %s", dsn, fix)
}

// ManagedOnly are the options in o that only a managed server can honour,
// each a problem when o reaches an existing server (o.DSN).
func (o Options) ManagedOnly() []*ManagedOnlyError {
	var bad []*ManagedOnlyError
	if o.BufferPool > 0 {
		bad = append(bad, &ManagedOnlyError{Option: BufferPoolOption})
	}
	if o.ServerMemory > 0 {
		bad = append(bad, &ManagedOnlyError{Option: ServerMemoryOption})
	}
	if len(o.Settings) > 0 {
		bad = append(bad, &ManagedOnlyError{Option: SettingOption})
	}
	return bad
}

// NoExternalModeError is an existing server (--dsn) asked of an engine
// that runs inside dbio on a target: the one rule for the command line,
// a suite's runs and the engine itself.
type NoExternalModeError struct {
	Engine string
}

// Error is the command line's form.
func (e *NoExternalModeError) Error() string { return "--dsn: " + e.say("--dsn", "--target DIR") }

// InTable is a suite file's form, following its dsn key.
func (e *NoExternalModeError) InTable() string { return e.say("dsn", "a data target") }

func (e *NoExternalModeError) say(dsn, target string) string {
	return fmt.Sprintf("%s has no external mode: it runs inside dbio on a target; drop %s and give the run %s", e.Engine, dsn, target)
}
