package engine

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestManagedOnlyErrorForms checks every managed-only option in the words
// of the command line and of a suite file: the flag or the key, the rule,
// and the fix, each naming --dsn or dsn as the form does.
func TestManagedOnlyErrorForms(t *testing.T) {
	tests := []struct {
		option    ManagedOption
		flag, key string
		flagForm  string
		suiteForm string
	}{
		{BufferPoolOption, "--buffer-pool", "buffer_pool",
			"--buffer-pool: applies to a server dbio runs on a target, not to --dsn: size the existing server's buffer pool in its own configuration, or drop --dsn",
			"applies to a server dbio runs on a target, not to dsn: size the existing server's buffer pool in its own configuration, or drop dsn"},
		{ServerMemoryOption, "--server-memory", "server_memory",
			"--server-memory: applies to a server dbio runs on a target, not to --dsn: dbio cannot cap the memory of a server it did not start; drop one of them",
			"applies to a server dbio runs on a target, not to dsn: dbio cannot cap the memory of a server it did not start; drop one of them"},
		{SettingOption, "--setting", "settings",
			"--setting: applies to a server dbio runs on a target, not to --dsn: change the existing server's configuration, or drop --dsn",
			"applies to a server dbio runs on a target, not to dsn: change the existing server's configuration, or drop dsn"},
		{LimitOption, "--limit", "limit",
			"--limit: applies to a server dbio runs on a target, not to --dsn: dbio cannot throttle the storage of a server it did not start; drop one of them",
			"applies to a server dbio runs on a target, not to dsn: dbio cannot throttle the storage of a server it did not start; drop one of them"},
	}
	for _, tt := range tests {
		t.Run(string(tt.option), func(t *testing.T) {
			e := &ManagedOnlyError{Option: tt.option}
			if e.Flag() != tt.flag || e.Key() != tt.key {
				t.Errorf("Flag, Key = %q, %q; want %q, %q", e.Flag(), e.Key(), tt.flag, tt.key)
			}
			if got := e.Error(); got != tt.flagForm {
				t.Errorf("flag form:\n got %s\nwant %s", got, tt.flagForm)
			}
			if got := e.InTable(); got != tt.suiteForm {
				t.Errorf("suite form:\n got %s\nwant %s", got, tt.suiteForm)
			}
			var as *ManagedOnlyError
			if wrapped := fmt.Errorf("start postgres: %w", e); !errors.As(wrapped, &as) || as.Option != tt.option {
				t.Errorf("a wrapped problem is not found as a *ManagedOnlyError: %v", wrapped)
			}
		})
	}
}

// TestOptionsManagedOnly checks which of an existing server's options are
// refused: each managed-only one set, none of the others.
func TestOptionsManagedOnly(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want []ManagedOption
	}{
		{"nothing managed-only", Options{DSN: "postgres://h/db", Database: "dbio_tpcc", Transport: "tcp", MaxConns: 8, Fresh: true}, nil},
		{"buffer pool", Options{BufferPool: 1 << 30}, []ManagedOption{BufferPoolOption}},
		{"server memory", Options{ServerMemory: 1 << 30}, []ManagedOption{ServerMemoryOption}},
		{"settings", Options{Settings: map[string]string{"work_mem": "8MB"}}, []ManagedOption{SettingOption}},
		{"all three, in the flags' order", Options{BufferPool: 1, ServerMemory: 1, Settings: map[string]string{"a": "b"}},
			[]ManagedOption{BufferPoolOption, ServerMemoryOption, SettingOption}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []ManagedOption
			for _, e := range tt.o.ManagedOnly() {
				got = append(got, e.Option)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ManagedOnly = %v, want %v", got, tt.want)
			}
		})
	}
}
