#!/bin/sh
# TPC-C tenants on two database hosts at once, dbio on each driving its
# own PostgreSQL: the fleet's TPM and NOPM summed over the seconds both
# hosts measured, its percentiles from their merged histograms, a row per
# host. dbio copies itself to each host over ssh (into ~/.dbio/bin there)
# and brings each host's results back under the run's directory.
#
# Name your own hosts: the destination is what ssh connects to, with your
# keys and agent (or --ssh-config FILE). Each host needs PostgreSQL's
# programs and an existing /srv/db. See docs/fleet.md.
#
# A suite file puts the same run on hosts with [[host]] tables and a data
# target on them (examples/fleet/sysbench-hosts.toml); --driver coordinator
# drives your own server on a host from here instead
# (examples/fleet/driver-placement.toml).
exec dbio tpcc --engine postgres --warehouses 10 --users 8 \
  --ramp-time 2m --runtime 10m \
  --host db1=admin@10.0.0.21 --host db2=admin@10.0.0.22 \
  --target db1:/srv/db --target db2:/srv/db \
  --name tenants-tpcc
