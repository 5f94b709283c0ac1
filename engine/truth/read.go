// Package truth holds a run's figures against the server's own view of the
// same requests: a truth log (one JSON line per request, as `llmload mock
// --truth-log` writes it) read beside a result file, so that a client's
// error — its TTFT, TPOT and E2E less the server's — and its cost per
// streamed token are measured rather than assumed.
package truth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/llmload/llmload/engine/sim"
)

// maxLine bounds one record's line; a truth record is a few hundred bytes.
const maxLine = 64 << 10

// Read reads a truth log; errors name the file and line. Blank lines are
// skipped; a last line cut short (a server killed mid-write) is an error
// too, since the log must describe every request it ends with.
func Read(r io.Reader, name string) ([]sim.TruthRecord, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []sim.TruthRecord
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, err := parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d KB: not a truth log", name, line+1, maxLine>>10)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no records: the server logged no request", name)
	}
	return out, nil
}

// parse decodes and checks one record.
func parse(b []byte) (sim.TruthRecord, error) {
	var rec sim.TruthRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("not a truth record: %v", err)
	}
	if dec.More() {
		return rec, errors.New("not a truth record: more than one JSON value on the line")
	}
	switch {
	case rec.Arrival.IsZero():
		return rec, errors.New("record has no arrival time")
	case rec.Tokens < 0:
		return rec, fmt.Errorf("negative token count %d", rec.Tokens)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"ttft_ms", rec.TTFTMS}, {"tpot_ms", rec.TPOTMS}, {"e2e_ms", rec.E2EMS}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return rec, fmt.Errorf("%s %v is not a duration", f.name, f.v)
		}
	}
	return rec, nil
}
