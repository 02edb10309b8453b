// Package telemetry samples the operating system once a second while a step
// runs (CPU, block devices, pressure stall information, the processes of dbio
// and of the database server, the engine's counters), on this machine
// through /proc and on a fleet's other hosts through their node exporters,
// summarizes each step and names its bottleneck. It also reads the host
// facts recorded in run.json.
//
// Everything is read through an FS root, so tests run on captured /proc
// snapshots (testdata/snap, made by testdata/capture.sh).
//
// Each Sample returns the per-second values since the previous call:
//
//	cpu_user_pct        user + nice (guest time is inside both)   % of all CPUs
//	cpu_system_pct      system + irq + softirq                    % of all CPUs
//	cpu_idle_pct        idle                                       % of all CPUs
//	cpu_iowait_pct      idle with I/O outstanding                  % of all CPUs
//	cpu_steal_pct       taken by the hypervisor                    % of all CPUs
//	                    (the five add up to 100)
//	load_1m             the kernel's 1-minute load average: tasks   tasks
//	                    running, waiting for a CPU or in D state
//	                    (dbio's and the server's included)
//	disk_<dev>_rps      reads completed per second
//	disk_<dev>_wps      writes completed per second
//	disk_<dev>_rmbps    MB read per second (MB = 10^6 bytes)
//	disk_<dev>_wmbps    MB written per second
//	disk_<dev>_r_await_ms  mean time of the reads completed, queue included,
//	disk_<dev>_w_await_ms  and of the writes; absent in seconds without any
//	disk_<dev>_aqu      mean number of I/Os in flight (queue depth)
//	disk_<dev>_util_pct share of the second with at least one I/O in flight
//	psi_cpu_some_pct    share of wall time some task waited for a CPU
//	psi_io_some_pct     … some task was stalled on I/O
//	psi_io_full_pct     … all non-idle tasks were stalled on I/O
//	psi_memory_some_pct, psi_memory_full_pct  the same for memory
//	proc_dbio_cpu_pct   dbio's CPU time                            % of all CPUs
//	proc_dbio_rss_mb    dbio's resident memory, MB, shared pages counted once
//	proc_server_cpu_pct, proc_server_rss_mb  the same for the database server
//	proc_dbio_blkio_wait_pct    block-I/O delay of dbio's threads    % of one
//	proc_server_blkio_wait_pct  (SQLite's among them), and of the     thread
//	                    server's processes and their threads, summed over
//	                    the threads: 100 is one thread waiting the whole
//	                    second; from field 42 of /proc/<pid>/task/<tid>/stat,
//	                    read only while kernel.task_delayacct is 1 (absent
//	                    otherwise); a thread that exits between two samples
//	                    takes its last second's delay with it
//	cpu_other_pct       the CPUs' busy time that was neither dbio's   % of all CPUs
//	                    nor the server's: other processes and kernel
//	                    threads (100 - idle - iowait - steal - dbio - server,
//	                    clamped at 0)
//	memcg_limit_mb      the server's memory cgroup (--server-memory):  MB
//	memcg_usage_mb      its cap, all memory charged to it, the page
//	memcg_cache_mb      cache (file pages) and the processes' own
//	memcg_anon_mb       (anonymous) memory among it, at the sample
//	memcg_limit_hits_per_s  times per second the group hit its cap
//	memcg_refaults_per_s    pages evicted and read back soon after
//	memcg_major_faults_per_s  faults its processes waited on disk for
//	memcg_oom_kills_per_s     processes killed for want of memory
//	memcg_pressure_some_pct, memcg_pressure_full_pct  the group's own
//	                    memory stall, where the kernel keeps it (cgroup v2)
//	iocap_<kind>_served the storage's block-I/O cgroup (--limit, a storage
//	                    class), for each cap it sets (<kind> r_iops, w_iops,
//	                    r_bps, w_bps): what its busiest capped device served
//	                    the group, I/Os per second or MB per second
//	iocap_<kind>_used_pct  that, in % of the cap
//	iocap_<kind>_at_cap_pct  100 in a second at 90 % of the cap or more,
//	                    else 0: its step mean is the share of seconds the cap
//	                    bound
//	iocap_pressure_some_pct, iocap_pressure_full_pct  the group's own I/O
//	                    stall, where the kernel keeps it (cgroup v2's
//	                    io.pressure; cgroup v1 has none)
//	engine_<name>_per_s per-second rate of each engine counter
//	db_<kind>_await_ms  mean wait of the engine's own <kind> operations
//	                    (read, write, log_write, sync, data_sync), from a
//	                    pair of counters <kind>_wait_ms and <kind>_ops;
//	                    absent in seconds without such an operation
//	telemetry_cost_pct  CPU time of this Sample call               % of one core
//	mem_used_mb         the machine's memory in use (all of it less  MB
//	                    what is available), read from a host's node
//	                    exporter only
//	mem_available_mb, mem_cache_mb  what is available, and the page cache
//
// A host dbio does not run on is sampled through its Prometheus node
// exporter (Exporter): the same CPU, load, disk and pressure metrics,
// computed by the same code from the exporter's copies of the same kernel
// counters, and the memory levels above; processes, memory cgroups and
// engine counters are not read there. A Sampler given such hosts
// (Options.Hosts: the database host of a server driven from here by its
// DSN) reads them at each of its samples: their values join the row as
// host_<host>_<metric>, and each step's summary holds every host's own
// (Summary.Hosts).
//
// Device names in metric names are lower case with anything other than a
// letter or digit turned into "_" ("dm-0" → "dm_0"). Pressure metrics are
// computed from the kernel's cumulative stall totals, not its averages, and
// are absent where the kernel has no /proc/pressure.
package telemetry
