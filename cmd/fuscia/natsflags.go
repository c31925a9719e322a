package main

import (
	"fmt"
	"time"

	"github.com/fuscia/fuscia/engine/cluster"
	"github.com/fuscia/fuscia/engine/cluster/clusterkey"
)

// natsFlags are the flags serve and worker share to reach a cluster (docs/cluster.md).
type natsFlags struct {
	urls, creds, tlsCA, prefix, keyFile *string
	ackWait                             *time.Duration
	maxDeliver                          *int
}

// addNATSFlags adds the cluster flags; a worker's -max-deliver says it is the coordinator's
// (a worker reads it for nothing but its presence on a shared command line).
func addNATSFlags(fs *flagSet, worker bool) *natsFlags {
	maxDeliverHelp := "fail an attempt with worker_lost after `N` deliveries to workers that stopped answering"
	if worker {
		maxDeliverHelp = "the coordinator's (serve's) setting: no effect on a worker, which accepts it so that both roles can share a command line"
	}
	return &natsFlags{
		urls:       fs.String("nats", "", "run on the NATS JetStream servers at `URL[,URL…]` (default $FUSCIA_NATS_URL)"),
		creds:      fs.String("nats-creds", "", "authenticate to NATS with the credentials `FILE`"),
		tlsCA:      fs.String("nats-tls-ca", "", "trust the CA certificates (PEM) in `FILE` for NATS's TLS"),
		prefix:     fs.String("nats-prefix", cluster.DefaultPrefix, "name the streams, buckets and subjects with `NAME` (two installations can share one NATS)"),
		keyFile:    fs.String("cluster-key-file", "", "the cluster key: 32 random bytes in standard base64 in `FILE` (default $FUSCIA_CLUSTER_KEY_FILE)"),
		ackWait:    fs.Duration("nats-ack-wait", cluster.DefaultAckWait, "give an attempt to another worker when its worker has not sent a heartbeat for `D`"),
		maxDeliver: fs.Int("max-deliver", cluster.DefaultMaxDeliver, maxDeliverHelp),
	}
}

// config reads the flags and the environment. enabled is false when neither -nats nor
// FUSCIA_NATS_URL is set (one machine). Errors are sentences for the user.
func (n *natsFlags) config(c *cli) (cfg cluster.Config, enabled bool, err error) {
	urls := *n.urls
	if urls == "" {
		urls = c.getenv("FUSCIA_NATS_URL")
	}
	if urls == "" {
		return cluster.Config{}, false, nil
	}
	keyFile := *n.keyFile
	if keyFile == "" {
		keyFile = c.getenv("FUSCIA_CLUSTER_KEY_FILE")
	}
	if keyFile == "" {
		return cluster.Config{}, true, fmt.Errorf("-nats needs the cluster key: give -cluster-key-file FILE or set FUSCIA_CLUSTER_KEY_FILE; make one with `head -c 32 /dev/urandom | base64 > FILE` and give the same file to the coordinator and every worker")
	}
	key, err := clusterkey.Load(keyFile)
	if err != nil {
		return cluster.Config{}, true, err
	}
	cfg = cluster.Config{URLs: urls, Creds: *n.creds, TLSCA: *n.tlsCA, Prefix: *n.prefix, Key: key,
		AckWait: *n.ackWait, MaxDeliver: *n.maxDeliver}
	if err := cfg.Check(); err != nil {
		return cluster.Config{}, true, err
	}
	return cfg, true, nil
}
