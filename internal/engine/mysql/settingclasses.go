package mysql

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"dbio/internal/engine"
	"dbio/internal/engine/server"
	"dbio/internal/execx"
)

// Why dbio refuses the settings it sets itself or that reach beyond the
// instance, in the words the refusal gives.
const (
	placesData    = "dbio places the data directory itself, in <target>/dbio/mariadb: use --target (and --log-target for the redo log)"
	placesRedo    = "dbio places the redo log itself: use --log-target to put it on other storage"
	placesSocket  = "dbio places the server's socket itself, in a directory only the server's user may enter"
	placesPID     = "dbio places the pid file itself, by which it finds a server an earlier run left running"
	placesNetwork = "dbio keeps its server on a free port of 127.0.0.1, reachable from this machine only and never on the machine's own server's port"
	placesUser    = "dbio chooses the unprivileged user the server runs as"
	runsSQL       = "runs statements dbio did not write, as the server's user or on every connection: dbio runs no program or script a setting names"
	runsCommand   = "runs a program as the server's user: dbio runs no program a setting names"
	loadsLibrary  = "loads code into the server: dbio loads no plugin or library a setting names"
	findsCode     = "says where the server finds its plugins and libraries: dbio loads no code a setting names"
	debugFiles    = "debugging options of the server or a library, which may name files to write: dbio passes none on"
)

// settingClasses are MariaDB's (and MySQL's) options whose value names
// something on the machine, and every other free-text option MariaDB
// 10.11 lists in `mariadbd --verbose --help` (those written "=name"
// that take more than one of a fixed list), reviewed as naming nothing.
// A free-text option of another version that is missing here is refused
// until it is reviewed (TestSettingClassesCoverTheServer). Names are
// written with underscores; the server reads dashes the same.
var settingClasses = map[string]engine.SettingClass{
	// Where the instance is and how it is reached.
	"datadir":                   {Kind: engine.Owned, Why: placesData},
	"innodb_log_group_home_dir": {Kind: engine.Owned, Why: placesRedo},
	"socket":                    {Kind: engine.Owned, Why: placesSocket},
	"mysqlx_socket":             {Kind: engine.Owned, Why: placesSocket},
	"pid_file":                  {Kind: engine.Owned, Why: placesPID},
	"port":                      {Kind: engine.Owned, Why: placesNetwork},
	"extra_port":                {Kind: engine.Owned, Why: placesNetwork},
	"admin_port":                {Kind: engine.Owned, Why: placesNetwork},
	"mysqlx_port":               {Kind: engine.Owned, Why: placesNetwork},
	"bind_address":              {Kind: engine.Owned, Why: placesNetwork},
	"admin_address":             {Kind: engine.Owned, Why: placesNetwork},
	"mysqlx_bind_address":       {Kind: engine.Owned, Why: placesNetwork},
	"user":                      {Kind: engine.Owned, Why: placesUser},
	"chroot":                    {Kind: engine.Owned, Why: "would move the server into another root directory: " + placesData},

	// Programs and statements.
	"init_file":        {Kind: engine.Program, Why: runsSQL},
	"init_connect":     {Kind: engine.Program, Why: runsSQL},
	"init_slave":       {Kind: engine.Program, Why: runsSQL},
	"init_replica":     {Kind: engine.Program, Why: runsSQL},
	"wsrep_notify_cmd": {Kind: engine.Program, Why: runsCommand},
	"wsrep_sst_method": {Kind: engine.Program, Why: "runs the script wsrep_sst_<method> as the server's user: dbio runs no program a setting names"},

	// Code.
	"plugin_load":            {Kind: engine.Library, Why: loadsLibrary},
	"plugin_load_add":        {Kind: engine.Library, Why: loadsLibrary},
	"early_plugin_load":      {Kind: engine.Library, Why: loadsLibrary},
	"wsrep_provider":         {Kind: engine.Library, Why: loadsLibrary},
	"plugin_dir":             {Kind: engine.Library, Why: findsCode},
	"basedir":                {Kind: engine.Library, Why: findsCode},
	"wsrep_provider_options": {Kind: engine.Library, Why: "options of the replication library, which may name files: dbio loads no code a setting names"},
	"debug":                  {Kind: engine.Library, Why: debugFiles},
	"wsrep_dbug_option":      {Kind: engine.Library, Why: debugFiles},

	// Files and directories the server reads or writes.
	"aria_log_dir_path":            {Kind: engine.Path},
	"character_sets_dir":           {Kind: engine.Path},
	"des_key_file":                 {Kind: engine.Path},
	"ft_stopword_file":             {Kind: engine.Path},
	"general_log_file":             {Kind: engine.Path},
	"innodb_buffer_pool_filename":  {Kind: engine.Path},
	"innodb_data_home_dir":         {Kind: engine.Path},
	"innodb_tmpdir":                {Kind: engine.Path},
	"innodb_undo_directory":        {Kind: engine.Path},
	"innodb_temp_tablespaces_dir":  {Kind: engine.Path},
	"language":                     {Kind: engine.Path},
	"lc_messages_dir":              {Kind: engine.Path},
	"log_bin":                      {Kind: engine.Path},
	"log_bin_index":                {Kind: engine.Path},
	"log_ddl_recovery":             {Kind: engine.Path},
	"log_error":                    {Kind: engine.Path},
	"log_isam":                     {Kind: engine.Path},
	"log_slow_query_file":          {Kind: engine.Path},
	"slow_query_log_file":          {Kind: engine.Path},
	"log_tc":                       {Kind: engine.Path},
	"master_info_file":             {Kind: engine.Path},
	"relay_log":                    {Kind: engine.Path},
	"relay_log_index":              {Kind: engine.Path},
	"relay_log_info_file":          {Kind: engine.Path},
	"secure_file_priv":             {Kind: engine.Path},
	"slave_load_tmpdir":            {Kind: engine.Path},
	"replica_load_tmpdir":          {Kind: engine.Path},
	"ssl_ca":                       {Kind: engine.Path},
	"ssl_capath":                   {Kind: engine.Path},
	"ssl_cert":                     {Kind: engine.Path},
	"ssl_crl":                      {Kind: engine.Path},
	"ssl_crlpath":                  {Kind: engine.Path},
	"ssl_key":                      {Kind: engine.Path},
	"wsrep_data_home_dir":          {Kind: engine.Path},
	"wsrep_status_file":            {Kind: engine.Path},
	"server_audit_file_path":       {Kind: engine.Path},
	"file_key_management_filename": {Kind: engine.Path},
	"tmpdir":                       {Kind: engine.Paths, Sep: ":"},
	"innodb_data_file_path":        {Kind: engine.Paths, Sep: ";"},
	"innodb_temp_data_file_path":   {Kind: engine.Paths, Sep: ";"},
	"innodb_directories":           {Kind: engine.Paths, Sep: ";"},
	"log_basename":                 {Kind: engine.FileName, Why: "the server names its logs and pid file with it in the data directory"},

	// Free text that names nothing on the machine: names of engines,
	// character sets, databases, tables and hosts, formats, lists of
	// switches, modes written as words.
	"aria_group_commit":                    {},
	"binlog_do_db":                         {},
	"binlog_format":                        {},
	"binlog_ignore_db":                     {},
	"binlog_row_image":                     {},
	"binlog_row_metadata":                  {},
	"character_set_filesystem":             {},
	"character_set_server":                 {},
	"collation_server":                     {},
	"column_compression_zlib_strategy":     {},
	"date_format":                          {},
	"datetime_format":                      {},
	"default_storage_engine":               {},
	"default_time_zone":                    {},
	"default_tmp_storage_engine":           {},
	"delay_key_write":                      {},
	"enforce_storage_engine":               {},
	"event_scheduler":                      {},
	"feedback_http_proxy":                  {},
	"feedback_url":                         {},
	"feedback_user_info":                   {},
	"ft_boolean_syntax":                    {},
	"gtid_pos_auto_engines":                {},
	"histogram_type":                       {},
	"ignore_db_dirs":                       {},
	"innodb_checksum_algorithm":            {},
	"innodb_ft_aux_table":                  {},
	"innodb_ft_server_stopword_table":      {},
	"innodb_ft_user_stopword_table":        {},
	"innodb_linux_aio":                     {},
	"innodb_monitor_disable":               {},
	"innodb_monitor_enable":                {},
	"innodb_monitor_reset":                 {},
	"innodb_monitor_reset_all":             {},
	"lc_messages":                          {},
	"lc_time_names":                        {},
	"myisam_stats_method":                  {},
	"optimizer_adjust_secondary_key_costs": {},
	"optimizer_switch":                     {},
	"optimizer_trace":                      {},
	"performance_schema_instrument":        {},
	"proxy_protocol_networks":              {},
	"query_cache_type":                     {},
	"replicate_do_db":                      {},
	"replicate_do_table":                   {},
	"replicate_events_marked_for_skip":     {},
	"replicate_ignore_db":                  {},
	"replicate_ignore_table":               {},
	"replicate_rewrite_db":                 {},
	"replicate_wild_do_table":              {},
	"replicate_wild_ignore_table":          {},
	"report_host":                          {},
	"report_password":                      {},
	"report_user":                          {},
	"secure_timestamp":                     {},
	"session_track_system_variables":       {},
	"session_track_transaction_info":       {},
	"slave_ddl_exec_mode":                  {},
	"slave_exec_mode":                      {},
	"slave_parallel_mode":                  {},
	"slave_run_triggers_for_rbr":           {},
	"slave_skip_errors":                    {},
	"slave_transaction_retry_errors":       {},
	"ssl_cipher":                           {},
	"system_versioning_alter_history":      {},
	"thread_pool_priority":                 {},
	"time_format":                          {},
	"updatable_views_with_limit":           {},
	"version":                              {},
	"wsrep_allowlist":                      {},
	"wsrep_certification_rules":            {},
	"wsrep_cluster_address":                {},
	"wsrep_cluster_name":                   {},
	"wsrep_node_address":                   {},
	"wsrep_node_incoming_address":          {},
	"wsrep_node_name":                      {},
	"wsrep_sst_auth":                       {},
	"wsrep_sst_donor":                      {},
	"wsrep_sst_receive_address":            {},
	"wsrep_start_position":                 {},
	"wsrep_trx_fragment_unit":              {},
}

// normName spells an option name as the server reads it: dashes and
// underscores are one, case does not matter.
func normName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "_")) }

// optionPrefixes are what the server reads before an option's name:
// loose- (ignore the option when unknown), skip-, disable- and enable-
// (a switch off or on), and maximum- (the most a session may set).
var optionPrefixes = []string{"skip_", "disable_", "enable_", "maximum_"}

// optionBases are the options the normalized name n may stand for, most
// literal first: n itself, n without loose-, then without a switch's
// prefix, and the option of a named key cache (hot_cache.key_buffer_size).
func optionBases(n string) []string {
	if _, opt, ok := strings.Cut(n, "."); ok {
		n = opt
	}
	out := []string{n}
	if rest, ok := strings.CutPrefix(n, "loose_"); ok {
		n = rest
		out = append(out, n)
	}
	for _, p := range optionPrefixes {
		if rest, ok := strings.CutPrefix(n, p); ok {
			out = append(out, rest)
		}
	}
	return out
}

// helpOption is an option's line in `mariadbd --verbose --help`:
// "  --name[=name]  description", with a short form before it at times.
var helpOption = regexp.MustCompile(`^  (?:-.?, )?--([A-Za-z0-9_-]+)(\S*)\s*(.*)$`)

// listSettings asks the installed server for its options.
func (e *Engine) listSettings(ctx context.Context) (server.Known, error) {
	bins, err := e.findBinaries(ctx)
	if err != nil {
		return server.Known{}, err
	}
	res, err := e.Runner.Run(ctx, execx.Cmd{Name: bins.server, Args: []string{"--no-defaults", "--verbose", "--help"}})
	if err != nil {
		return server.Known{}, fmt.Errorf("%s --verbose --help: %w", bins.server, err)
	}
	k := parseHelp(string(res.Stdout))
	k.Server = fmt.Sprintf("%s %s", serverName(bins.flavour), bins.version)
	return k, nil
}

// serverName names a flavour's server in messages.
func serverName(f flavour) string {
	if f == mysql {
		return "MySQL"
	}
	return "MariaDB"
}

// parseHelp reads the options `mariadbd --verbose --help` lists before
// its table of values: an option written "=name" takes free text, unless
// its description lists the only values it takes.
func parseHelp(out string) server.Known {
	k := server.Known{Names: map[string]string{}, Text: map[string]bool{}}
	var name, form, text string
	flush := func() {
		if name == "" {
			return
		}
		n := normName(name)
		k.Names[n] = name
		if strings.Contains(form, "=name") && !strings.Contains(text, "One of:") && !strings.Contains(text, "Any combination of") {
			k.Text[n] = true
		}
		name = ""
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Variables (--variable-name=value)") {
			break
		}
		if m := helpOption.FindStringSubmatch(line); m != nil {
			flush()
			name, form, text = m[1], m[2], m[3]
			continue
		}
		if name != "" && strings.HasPrefix(line, "    ") {
			text += " " + strings.TrimSpace(line)
		}
	}
	flush()
	return k
}
