// Package testfleet gives tests a fleet of hosts on this one machine: each
// host a Linux network namespace with its own address, running its own
// OpenSSH server, fio server and Prometheus node exporter, so that code that
// drives several hosts over SSH, fio's client/server mode and the node
// exporter is tested against the real programs.
//
// # What Start builds
//
// For a fleet of n hosts (fleet id ID, six hex digits, and the test process's
// pid PID):
//
//   - a bridge dbth-ID in the root namespace holding .1 of a free /24 in
//     10.213.0.0/16 (one that no address or route of the machine overlaps;
//     Fleet.Gateway), and for host n a namespace dbio-thPID-ID-hn joined to the
//     bridge by a veth (dbth-ID-n outside, eth0 inside) with address .n+1.
//     The namespaces have no default route: the hosts reach each other, the
//     root namespace and their own loopback, nothing else;
//   - per host, started with ip netns exec in a UTS namespace whose hostname
//     is the host's name (h1, h2...), and waited for until each accepts
//     connections: Debian's sshd (port 22, a host key made for the test, root
//     login by key only, no PAM, $HOME a directory of the host's own),
//     fio --server (port 8765, working in the host's storage directory) and
//     prometheus-node-exporter (port 9100, the collectors that work in a
//     namespace), all bound to the host's address;
//   - in the test's temporary directory: an ssh_config, known_hosts and key
//     with which ssh -F <Fleet.SSHConfig> h1 true works without a prompt, a
//     directory per host with its storage and its daemons' logs.
//
// Teardown runs in t.Cleanup, also when the test fails or panics: it kills
// every process in the namespaces, deletes the veths, the bridge and the
// namespaces, and fails the test if any of them or any daemon is left. When
// the test failed, the end of each daemon's log is written to the test log.
//
// # What it needs
//
// Root, a kernel with network namespaces, and iproute2, openssh-server, fio
// and prometheus-node-exporter (make test installs them with their system
// services disabled). Without them a test is skipped with the install command,
// and fails when CI=true. Start takes a machine-wide lock
// (/run/dbio-testfleet.lock) only while it chooses a subnet and builds the
// links, so test packages running in parallel build their fleets side by
// side.
//
// # When something does not work
//
// A failed test's log has the end of every daemon's log; the logs stay in the
// host directories until the test ends. fio gives a job file that directly
// follows a --client to that client alone: to send one job file to several
// servers, put it after an option that follows the last --client (or give
// each --client its own). Host-to-host traffic crosses the
// fleet's bridge, so a firewall that filters bridged traffic (br_netfilter
// with a dropping FORWARD chain, as Docker sets up) blocks it while the root
// namespace still reaches every host.
//
// # Leftovers
//
// A test binary that is killed (go test -timeout, SIGKILL) runs no cleanup,
// and its namespaces and bridge stay (its daemons die with it). They are
// easy to spot: ip netns list | grep dbio-th, ip link | grep dbth-. Start
// removes them before it builds, as does Sweep, which takes only the fleets
// whose creating process (the pid in the namespace's name, started before the
// namespace) is gone: go test -count=1 -run Sweep ./internal/testfleet (as
// root) does, or by hand, for each name: ip netns pids NAME | xargs -r kill -9;
// ip netns del NAME; then ip link del dbth-ID.
package testfleet
