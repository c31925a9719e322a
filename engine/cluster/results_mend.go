package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A party with JetStream API rights on the cluster's account (or an operator's slip) can delete
// the results stream or the coordinator's consumer of it. The client then ends the coordinator's
// subscription (a deleted consumer is final to it), and no result would reach a waiting call
// again until serve restarted. So the coordinator watches its subscription's errors and, when
// they say the consumer is gone or silent, makes the stream and the consumer again (both are
// made by name: what already exists is left as it is) and subscribes anew. The results the
// deleted stream held are lost: their calls wait out their timeouts, and the nodes' retry blocks
// decide, as for a lost worker. A deleted work stream is made again by the next attempt sent to
// it (setup.remake).

// menderPause is the least time between two mends: the errors that call for one come in
// bursts (a missed heartbeat every few seconds while NATS is away).
const menderPause = time.Second

// consume subscribes to the results stream through cons.
func (c *Coordinator) consume(cons jetstream.Consumer) (jetstream.ConsumeContext, error) {
	cc, err := cons.Consume(c.onResult, jetstream.ConsumeErrHandler(c.onConsumeError))
	if err != nil {
		return nil, fmt.Errorf("consume the results stream: %w", err)
	}
	return cc, nil
}

// onConsumeError asks the mender to look at the results stream when the subscription's error
// says its consumer is gone (deleted, with its stream or alone) or silent.
func (c *Coordinator) onConsumeError(_ jetstream.ConsumeContext, err error) {
	if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, jetstream.ErrBadRequest) || errors.Is(err, jetstream.ErrNoHeartbeat) {
		select {
		case c.mend <- struct{}{}:
		default:
		}
	}
}

// patrolInterval is how often the mender looks at what the coordinator wrote and made without
// being asked (patrol).
const patrolInterval = 5 * time.Second

// mender makes the results stream and its consumer again when asked, and patrols every
// patrolInterval, until Close.
func (c *Coordinator) mender() {
	defer c.menderWG.Done()
	patrol := time.NewTicker(patrolInterval)
	defer patrol.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-patrol.C:
			c.patrol()
			continue
		case <-c.mend:
		}
		if err := c.mendResults(); err != nil {
			c.log.Warn("cannot make the results stream again; trying again", "error", err)
			select {
			case c.mend <- struct{}{}:
			default:
			}
		}
		select {
		case <-c.done:
			return
		case <-time.After(menderPause):
		}
	}
}

// mendResults makes the results stream and the coordinator's consumer if either is missing, and
// subscribes again if the subscription ended.
func (c *Coordinator) mendResults() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := c.conn.names.resultsStream()
	st, err := c.conn.js.Stream(ctx, name)
	streamGone := errors.Is(err, jetstream.ErrStreamNotFound)
	if err != nil && !streamGone {
		return fmt.Errorf("look up the results stream %s: %w", name, err)
	}
	consumerGone := streamGone
	if !streamGone {
		_, err := st.Consumer(ctx, coordinatorConsumer)
		consumerGone = errors.Is(err, jetstream.ErrConsumerNotFound)
		if err != nil && !consumerGone {
			return fmt.Errorf("look up the consumer %s of %s: %w", coordinatorConsumer, name, err)
		}
	}
	c.consumeMu.Lock()
	defer c.consumeMu.Unlock()
	ended := c.consuming == nil // a subscription that failed to start
	if c.consuming != nil {
		select {
		case <-c.consuming.Closed():
			ended = true
		default:
		}
	}
	if !consumerGone && !ended {
		return nil // a heartbeat missed while NATS was away: the subscription goes on by itself
	}
	_, cons, err := c.setup.results(ctx)
	if err != nil {
		return err
	}
	switch {
	case streamGone:
		c.log.Warn("the results stream was deleted; made it again (the results it held are lost: their attempts time out, and their nodes' retry blocks decide)", "stream", name)
	case consumerGone:
		c.log.Warn("the coordinator's consumer of the results stream was deleted; made it again", "stream", name, "consumer", coordinatorConsumer)
	}
	if c.consuming != nil {
		c.consuming.Stop()
	}
	cc, err := c.consume(cons)
	if err != nil {
		c.consuming = nil
		return err
	}
	c.consuming = cc
	return nil
}

// patrol puts back what someone with JetStream API rights (or an operator's slip) changed:
//   - the cluster's info record, which workers check before they join and when an attempt is
//     sealed with another key: forged to another key id, it made new workers refuse to start
//     and running ones hand every attempt back;
//   - the `workers` consumer of each pool this coordinator sent to: deleted alone (its stream
//     kept), its attempts waited for their timeouts, since the stream's remaking (setup.remake)
//     is only for a stream that is gone.
func (c *Coordinator) patrol() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := c.info()
	if kv, err := c.conn.js.KeyValue(ctx, c.conn.names.clusterBucket()); err == nil {
		if got, ok, err := readInfo(ctx, kv, c.conn.cfg.Key); !ok || err != nil || got != want {
			if err := c.setup.publishInfo(ctx, kv, want); err == nil {
				c.log.Warn("the cluster's info record had been changed by someone else; wrote it again", "key_id", got.KeyID, "version", got.Version)
			}
		}
	}
	for _, pool := range c.setup.knownPools() {
		st, err := c.conn.js.Stream(ctx, c.conn.names.workStream(pool))
		if err != nil {
			continue // a stream gone is made again by the next attempt sent to it
		}
		if _, err := st.Consumer(ctx, consumerName); errors.Is(err, jetstream.ErrConsumerNotFound) {
			if _, err := c.setup.remake(ctx, pool); err == nil {
				c.log.Warn("the workers' consumer of a pool's work stream was deleted; made it again", "pool", pool, "consumer", consumerName)
			}
		}
	}
}
