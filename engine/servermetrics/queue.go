package servermetrics

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llmload/llmload/engine"
)

var _ engine.ServerQueue = (*Scraper)(nil)

// Queue takes one scrape now, beside the periodic ones, and returns the
// requests the server holds by its own gauges: those of RoleRunning and
// RoleWaiting of every known server found, each summed over its label
// sets. Safe for concurrent use.
func (s *Scraper) Queue() (engine.QueueReading, error) {
	fams, _, err := s.fetch()
	if err != nil {
		return engine.QueueReading{}, errors.New(s.scrub(err.Error()))
	}
	return queueOf(fams)
}

// queueOf reads the running and waiting gauges of a scrape.
func queueOf(fams families) (engine.QueueReading, error) {
	var r engine.QueueReading
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
		return r, engine.ErrNoQueue
	}
	r.Text = strings.Join(parts, ", ")
	return r, nil
}
