package postgres

import (
	"context"
	"fmt"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// Why dbio refuses the settings it sets itself or that reach beyond the
// instance, in the words the refusal gives.
const (
	placesData    = "dbio places the data directory itself, in <target>/dbio/postgres: use --target (and --log-target for the WAL)"
	placesConfig  = "dbio writes the server's configuration itself (postgresql.conf and its dbio.conf in the data directory): a setting cannot bring in another file"
	placesAuth    = "dbio sets the server's authentication itself (initdb's pg_hba.conf in the data directory, local connections in a private socket directory)"
	placesSocket  = "dbio places the server's socket itself, in a directory only the server's user may enter"
	placesNetwork = "dbio keeps its server on a free port of 127.0.0.1, reachable from this machine only and never on the machine's own server's port"
	runsCommand   = "runs a shell command as the server's user: dbio runs no program a setting names"
	loadsLibrary  = "loads libraries into the server: dbio loads no code a setting names"
)

// settingClasses are PostgreSQL's settings whose value names something
// on the machine, and every other setting of free text PostgreSQL 15 has
// (postgres --describe-config's STRING parameters and the developer
// options it leaves out), reviewed as naming nothing. A free-text setting
// of another version that is missing here is refused until it is
// reviewed (TestSettingClassesCoverTheServer). Earlier and later
// versions' path-, program- and library-valued settings are here too.
var settingClasses = map[string]engine.SettingClass{
	// Where the instance is, how it is reached, its configuration.
	"data_directory":          {Kind: engine.Owned, Why: placesData},
	"config_file":             {Kind: engine.Owned, Why: placesConfig},
	"include":                 {Kind: engine.Owned, Why: placesConfig},
	"include_dir":             {Kind: engine.Owned, Why: placesConfig},
	"include_if_exists":       {Kind: engine.Owned, Why: placesConfig},
	"hba_file":                {Kind: engine.Owned, Why: placesAuth},
	"ident_file":              {Kind: engine.Owned, Why: placesAuth},
	"unix_socket_directories": {Kind: engine.Owned, Why: placesSocket},
	"unix_socket_directory":   {Kind: engine.Owned, Why: placesSocket},
	"unix_socket_group":       {Kind: engine.Owned, Why: placesSocket},
	"port":                    {Kind: engine.Owned, Why: placesNetwork},
	"listen_addresses":        {Kind: engine.Owned, Why: placesNetwork},

	// Programs and connections to other servers.
	"archive_command":         {Kind: engine.Program, Why: runsCommand},
	"archive_cleanup_command": {Kind: engine.Program, Why: runsCommand},
	"recovery_end_command":    {Kind: engine.Program, Why: runsCommand},
	"restore_command":         {Kind: engine.Program, Why: runsCommand},
	"ssl_passphrase_command":  {Kind: engine.Program, Why: runsCommand},
	"primary_conninfo":        {Kind: engine.Program, Why: "connects the server to another server as its standby, with a connection string that may name files and a password: a benchmark's instance replicates from no one"},

	// Code.
	"shared_preload_libraries":  {Kind: engine.Library, Why: loadsLibrary},
	"session_preload_libraries": {Kind: engine.Library, Why: loadsLibrary},
	"local_preload_libraries":   {Kind: engine.Library, Why: loadsLibrary},
	"archive_library":           {Kind: engine.Library, Why: loadsLibrary},
	"jit_provider":              {Kind: engine.Library, Why: loadsLibrary},
	"dynamic_library_path":      {Kind: engine.Library, Why: "says where the server loads libraries from: dbio loads no code a setting names"},
	"extension_destdir":         {Kind: engine.Library, Why: "says where the server loads extensions and libraries from: dbio loads no code a setting names"},
	"extension_control_path":    {Kind: engine.Library, Why: "says where the server loads extensions from: dbio loads no code a setting names"},
	"output_plugin_libraries":   {Kind: engine.Library, Why: "lists libraries users may load as logical decoding plugins: dbio loads no code a setting names"},
	"oauth_validator_libraries": {Kind: engine.Library, Why: loadsLibrary},

	// Files and directories the server reads or writes.
	"log_directory":        {Kind: engine.Path},
	"external_pid_file":    {Kind: engine.Path},
	"krb_server_keyfile":   {Kind: engine.Path},
	"promote_trigger_file": {Kind: engine.Path},
	"ssl_ca_file":          {Kind: engine.Path},
	"ssl_cert_file":        {Kind: engine.Path},
	"ssl_crl_dir":          {Kind: engine.Path},
	"ssl_crl_file":         {Kind: engine.Path},
	"ssl_dh_params_file":   {Kind: engine.Path},
	"ssl_key_file":         {Kind: engine.Path},
	"stats_temp_directory": {Kind: engine.Path},
	"log_filename":         {Kind: engine.FileName, Why: "the server writes it in log_directory"},

	// Free text that names nothing on the machine (names of encodings,
	// locales, time zones and tablespaces, formats, lists of names).
	"application_name":                 {},
	"backtrace_functions":              {},
	"bonjour_name":                     {},
	"client_encoding":                  {},
	"cluster_name":                     {},
	"createrole_self_grant":            {},
	"datestyle":                        {},
	"debug_io_direct":                  {},
	"default_table_access_method":      {},
	"default_tablespace":               {},
	"default_text_search_config":       {},
	"event_source":                     {},
	"lc_messages":                      {},
	"lc_monetary":                      {},
	"lc_numeric":                       {},
	"lc_time":                          {},
	"log_destination":                  {},
	"log_line_prefix":                  {},
	"log_timezone":                     {},
	"primary_slot_name":                {},
	"recovery_target":                  {},
	"recovery_target_lsn":              {},
	"recovery_target_name":             {},
	"recovery_target_time":             {},
	"recovery_target_timeline":         {},
	"recovery_target_xid":              {},
	"restrict_nonsystem_relation_kind": {},
	"search_path":                      {},
	"ssl_ciphers":                      {},
	"ssl_ecdh_curve":                   {},
	"synchronous_standby_names":        {},
	"syslog_ident":                     {},
	"temp_tablespaces":                 {},
	"timezone":                         {},
	// A name of a file in PostgreSQL's own share/timezonesets, which
	// takes letters only.
	"timezone_abbreviations":   {},
	"wal_consistency_checking": {},
}

// developerSettings are the settings postgresql.conf takes that
// `postgres --describe-config` leaves out (developer options, and a few
// it marks as not for the sample file), with whether they are free text.
var developerSettings = map[string]bool{
	"allow_in_place_tablespaces": false, "allow_system_table_mods": false, "application_name": true,
	"backtrace_functions": true, "debug_discard_caches": false, "force_parallel_mode": false,
	"ignore_checksum_failure": false, "ignore_invalid_pages": false, "ignore_system_indexes": false,
	"jit_debugging_support": false, "jit_dump_bitcode": false, "jit_expressions": false,
	"jit_profiling_support": false, "jit_tuple_deforming": false, "post_auth_delay": false,
	"pre_auth_delay": false, "remove_temp_files_after_crash": false, "restrict_nonsystem_relation_kind": true,
	"trace_notify": false, "trace_recovery_messages": false, "trace_sort": false,
	"wal_consistency_checking": true, "zero_damaged_pages": false,
	"debug_parallel_query": false, "debug_logical_replication_streaming": false, "composite_type_mismatch": false,
}

// listSettings asks the installed server for its settings.
func (e *Engine) listSettings(ctx context.Context) (server.Known, error) {
	bins, err := e.findBinaries(ctx)
	if err != nil {
		return server.Known{}, err
	}
	res, err := e.Runner.Run(ctx, execx.Cmd{Name: bins.postgres, Args: []string{"--describe-config"}})
	if err != nil {
		return server.Known{}, fmt.Errorf("%s --describe-config: %w", bins.postgres, err)
	}
	k := parseDescribeConfig(string(res.Stdout))
	k.Server = "PostgreSQL " + bins.major
	return k, nil
}

// parseDescribeConfig reads `postgres --describe-config`: one setting a
// line, tab-separated, its name first and its type (BOOLEAN, INTEGER,
// REAL, STRING, ENUM) fourth; the developer options it leaves out are added.
func parseDescribeConfig(out string) server.Known {
	k := server.Known{Names: map[string]string{}, Text: map[string]bool{}}
	add := func(name string, text bool) {
		n := strings.ToLower(name)
		k.Names[n] = name
		if text {
			k.Text[n] = true
		}
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 4 || f[0] == "" {
			continue
		}
		add(f[0], f[3] == "STRING")
	}
	for name, text := range developerSettings {
		add(name, text)
	}
	return k
}
