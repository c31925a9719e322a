package cluster

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
)

// Defaults of docs/cluster.md.
const (
	DefaultPrefix     = "fuscia"
	DefaultAckWait    = 30 * time.Second
	DefaultMaxDeliver = 5
	DefaultPool       = "default"
	// heartbeatEvery is how often a worker renews its presence; workerTTL is how long a
	// presence lasts without renewal (the workers bucket's TTL).
	heartbeatEvery = 5 * time.Second
	workerTTL      = 15 * time.Second
	// dedupWindow is the work streams' duplicate window: a second publication of one attempt
	// within it (a coordinator that re-attached to it) is dropped by the server.
	dedupWindow = 2 * time.Minute
	// resultsMaxAge is how long a result stays in the results stream: a coordinator down for
	// longer finds its attempts' results gone and sends those attempts again (the same
	// attempt, run a second time).
	resultsMaxAge = 7 * 24 * time.Hour
	// maxAttemptAge is the oldest a work message a worker runs may be: far longer than an
	// attempt waits for a worker, far shorter than resultsMaxAge (clocks may differ).
	maxAttemptAge = resultsMaxAge / 2
	// maxAckPending bounds the attempts of a pool handed out and not yet acknowledged.
	maxAckPending = 10000
	// consumerName is the work streams' durable consumer, shared by every worker of a pool;
	// coordinatorConsumer is the results stream's.
	consumerName        = "workers"
	coordinatorConsumer = "coordinator"
)

// Config is what both roles need to reach the cluster.
type Config struct {
	// URLs is -nats: one or more server URLs, comma-separated.
	URLs string
	// Creds is -nats-creds (a NATS credentials file); TLSCA -nats-tls-ca.
	Creds, TLSCA string
	// Prefix is -nats-prefix: it names every stream, bucket and subject.
	Prefix string
	// Key is the cluster key (-cluster-key-file).
	Key *clusterkey.Key
	// AckWait is -nats-ack-wait: how long an attempt may go without its worker's heartbeat
	// before it is given to another worker. MaxDeliver is -max-deliver.
	AckWait    time.Duration
	MaxDeliver int
}

// nameRE is compiled on first use, as tokenRE: their bounded repetitions compile to large
// programs, which cost every fuscia command ~1 ms of start-up as package variables.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// Check fills the defaults and checks the fields.
func (c *Config) Check() error {
	if c.URLs == "" {
		return fmt.Errorf("-nats: no NATS server URL given")
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if !nameRE().MatchString(c.Prefix) {
		return fmt.Errorf("-nats-prefix %q: a prefix is 1 to 64 characters of a-z, 0-9, _ and -, starting with a letter or digit", c.Prefix)
	}
	if c.Key == nil {
		return fmt.Errorf("-nats needs the cluster key: give -cluster-key-file FILE or set FUSCIA_CLUSTER_KEY_FILE (make one with `head -c 32 /dev/urandom | base64 > FILE`)")
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.AckWait < time.Second {
		return fmt.Errorf("-nats-ack-wait %s: it must be at least 1s", c.AckWait)
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	if c.MaxDeliver < 1 {
		return fmt.Errorf("-max-deliver %d: it must be at least 1", c.MaxDeliver)
	}
	if err := checkCreds(c.Creds); err != nil {
		return err
	}
	return checkTLSCA(c.TLSCA)
}

// checkCreds reads a -nats-creds file before it is used: the NATS client's own errors for a
// file it cannot read or parse come at connect time and read like a server that is down.
func checkCreds(path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-nats-creds: %w", err)
	}
	// What the client will look for: a user JWT and an NKey seed, each between its BEGIN and
	// END lines (nkeys parses the seed; its JWT parse takes any text for a bare JWT).
	_, err = nkeys.ParseDecoratedNKey(b)
	if err == nil && !bytes.Contains(b, []byte("BEGIN NATS USER JWT")) {
		err = errors.New("no user JWT")
	}
	if err != nil {
		return fmt.Errorf("-nats-creds %s is not a NATS credentials file (a user JWT and an NKey seed, as nsc generate creds writes): %w", path, err)
	}
	return nil
}

// checkTLSCA reads a -nats-tls-ca file before it is used: it must hold PEM certificates.
func checkTLSCA(path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-nats-tls-ca: %w", err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return fmt.Errorf("-nats-tls-ca %s: no PEM certificate in it; give the CA certificate (PEM) that signed the NATS servers' certificates", path)
	}
	return nil
}

// names are the streams, buckets and subjects of one prefix.
type names struct{ p string }

func (n names) workStream(pool string) string      { return n.p + "_work_" + pool }
func (n names) workSubjects(pool string) string    { return n.p + ".work." + pool + ".>" }
func (n names) workSubject(pool, id string) string { return n.p + ".work." + pool + "." + id }
func (n names) resultsStream() string              { return n.p + "_results" }
func (n names) resultSubjects() string             { return n.p + ".results.>" }
func (n names) resultSubject(execution, id string) string {
	return n.p + ".results." + token(execution) + "." + id
}
func (n names) executionResults(execution string) string {
	return n.p + ".results." + token(execution) + ".>"
}
func (n names) cancelSubject() string    { return n.p + ".cancel" }
func (n names) workersBucket() string    { return n.p + "_workers" }
func (n names) clusterBucket() string    { return n.p + "_cluster" }
func (n names) componentsBucket() string { return n.p + "_components" }
func (n names) kvBucket() string         { return n.p + "_kv" }
func (n names) artifactsBucket() string  { return n.p + "_artifacts" }

var tokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// token is s as one subject token: itself when it is one (execution ids are ULIDs), else a
// digest of it.
func token(s string) string {
	if tokenRE().MatchString(s) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(sum[:12])
}
