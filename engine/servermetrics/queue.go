package servermetrics

import (
	"errors"
	"fmt"
	"strings"
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

// Queue takes one scrape now, beside the periodic ones, and returns the
// requests the server holds by its own gauges: those of RoleRunning and
// RoleWaiting of every known server found, each summed over its label
// sets. Safe for concurrent use.
func (s *Scraper) Queue() (QueueReading, error) {
	fams, _, err := s.fetch()
	if err != nil {
		return QueueReading{}, errors.New(s.scrub(err.Error()))
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
