package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrNoQueue is Queue's error when the server's metrics have no gauge of
// its running or waiting requests: its queue cannot be read.
var ErrNoQueue = errors.New("the server's metrics have no known running or waiting gauge " +
	"(vllm:num_requests_running, sglang:num_queue_reqs, tgi_queue_size, llamacpp:requests_deferred, ...)")

// QueueReading is one reading of a server's queue gauges.
type QueueReading struct {
	Running, Waiting float64
	// Text names each gauge read with its value.
	Text string
}

// Queue takes one scrape of every endpoint now, beside the periodic ones,
// and returns the requests the servers hold by their own gauges: those of
// RoleRunning and RoleWaiting of every known server found, each summed
// over its label sets and across the endpoints, so that a capacity
// search waits until every replica has emptied. An endpoint without such
// gauges is left out of the sum; ErrNoQueue when none has them. An
// endpoint that cannot be read is an error naming it. Safe for concurrent
// use.
func (s *Scraper) Queue() (QueueReading, error) {
	if len(s.pollers) == 1 {
		return s.pollers[0].queue()
	}
	readings, errs := make([]QueueReading, len(s.pollers)), make([]error, len(s.pollers))
	var wg sync.WaitGroup
	for i, p := range s.pollers {
		wg.Go(func() { readings[i], errs[i] = p.queue() })
	}
	wg.Wait()
	return s.sumQueues(readings, errs)
}

// sumQueues adds up the endpoints' readings; Text names each endpoint.
func (s *Scraper) sumQueues(readings []QueueReading, errs []error) (QueueReading, error) {
	var total QueueReading
	var parts []string
	read := false
	for i, p := range s.pollers {
		switch err := errs[i]; {
		case errors.Is(err, ErrNoQueue):
			parts = append(parts, p.redacted+": no queue gauge")
		case err != nil:
			return QueueReading{}, fmt.Errorf("%s: %w", p.redacted, err)
		default:
			read = true
			total.Running += readings[i].Running
			total.Waiting += readings[i].Waiting
			parts = append(parts, p.redacted+": "+readings[i].Text)
		}
	}
	if !read {
		return QueueReading{}, ErrNoQueue
	}
	total.Text = strings.Join(parts, "; ")
	return total, nil
}

// queue takes one scrape of the poller's endpoint and reads its queue.
func (p *poller) queue() (QueueReading, error) {
	fams, _, err := get(context.Background(), p.client, p.ep.URL, p.ep.Header)
	if err != nil {
		return QueueReading{}, errors.New(p.scrub(err.Error()))
	}
	return queueOf(fams)
}

// queueOf reads the running and waiting gauges of a scrape.
func queueOf(fams families) (QueueReading, error) {
	var r QueueReading
	var parts []string
	for _, c := range chosen {
		if c.kind != kindSum || c.role != RoleRunning && c.role != RoleWaiting {
			continue
		}
		mf := lookup(fams, c.name)
		if mf == nil {
			continue
		}
		v, n := sum(mf)
		if n == 0 {
			continue
		}
		if c.role == RoleRunning {
			r.Running += v
		} else {
			r.Waiting += v
		}
		parts = append(parts, fmt.Sprintf("%s %g", c.name, v))
	}
	if len(parts) == 0 {
		return r, ErrNoQueue
	}
	r.Text = strings.Join(parts, ", ")
	return r, nil
}
