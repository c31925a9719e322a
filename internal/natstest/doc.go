// Package natstest runs NATS servers with JetStream inside a test's process, for the tests of
// cluster mode: one server ([Start], or [StartWith] for a limit such as max_payload) or a cluster of several on loopback ([StartCluster]).
//
// # Model
//
// Each server listens on 127.0.0.1 on a port the system picks, and keeps its JetStream store
// in a directory of the test's (t.TempDir), so tests run in parallel without sharing anything.
// [Server.Restart] starts a new server on the same port and store, as NATS coming back after
// an outage; clients configured to reconnect find it again.
//
// # Logs
//
// A server's log is kept in memory and printed only when the test fails, so a passing test is
// quiet and a failing one says what NATS saw.
//
// # Timing
//
// Nothing here sleeps to synchronise: Start returns once the server accepts clients and
// JetStream is up; StartCluster once JetStream has a meta leader that sees every server and
// every server is current, polling with generous deadlines (busy machines, -race).
// JetStream elects leaders after randomised timeouts of several seconds, so a cluster takes a
// few seconds to form and to fail over: tests that stop a server poll for the outcome.
package natstest
