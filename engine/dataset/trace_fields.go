package dataset

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// stamp is a record's time in ns: since the Unix epoch when abs, else in
// the file's own clock (a number times the time unit).
type stamp struct {
	ns  int64
	abs bool
}

// timeUnits are the units of numeric timestamps, in ns.
var timeUnits = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

// maxStampNs bounds a numeric time so that the difference of any two fits
// in a time.Duration (under 146 years each way).
const maxStampNs = 1 << 62

// timeLayouts are the absolute times a trace may hold: Azure's
// ("2023-11-16 18:15:46.6805900", and "+00:00" in its 2024 trace) and RFC
// 3339. Parsing takes any fraction of a second after the seconds.
var timeLayouts = []string{
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05",
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
}

// parseStamp reads a time: a number in unit, or an absolute time.
func parseStamp(s, unit string) (stamp, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		ns := v * timeUnits[unit]
		if math.IsNaN(ns) || math.Abs(ns) >= maxStampNs {
			return stamp{}, fmt.Errorf("expected a time, got %s", quoteValue(s))
		}
		return stamp{ns: int64(math.Round(ns))}, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			// Any two times of these years are less than a Duration apart.
			if t.Year() < 1900 || t.Year() > 2100 {
				return stamp{}, fmt.Errorf("expected a time, got %s (year out of range)", quoteValue(s))
			}
			return stamp{ns: t.UnixNano(), abs: true}, nil
		}
	}
	return stamp{}, fmt.Errorf("expected a number (in %s) or a time like 2023-11-16 18:15:46.68 or RFC 3339, got %s", unit, quoteValue(s))
}

// parseLength reads a token count: an integer in [lo, MaxSyntheticTokens].
// A float that is an integer (512.0, as some exports write) is one.
func parseLength(s string, lo int) (int, error) {
	want := "a positive integer"
	if lo == 0 {
		want = "a non-negative integer"
	}
	s = strings.TrimSpace(s)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("expected %s, got %s", want, quoteValue(s))
		}
		if math.Abs(f) > math.MaxInt32 {
			return 0, fmt.Errorf("%s is more than %d tokens", quoteValue(s), MaxSyntheticTokens)
		}
		v = int64(f)
	}
	switch {
	case v < int64(lo):
		return 0, fmt.Errorf("expected %s, got %s", want, quoteValue(s))
	case v > MaxSyntheticTokens:
		return 0, fmt.Errorf("%s is more than %d tokens", quoteValue(s), MaxSyntheticTokens)
	}
	return int(v), nil
}

// parseIDList reads hash ids from a CSV cell: "1 2 3", "[1,2,3]", "1,2,3"
// or "1;2;3".
func parseIDList(s string) ([]int64, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	parts := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	if len(parts) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(parts))
	for i, p := range parts {
		v, err := parseID(p)
		if err != nil {
			return nil, fmt.Errorf("expected a list of integers, got %s at position %d", quoteValue(p), i+1)
		}
		ids[i] = v
	}
	return ids, nil
}

// parseID reads a hash id: an int64, or a uint64 kept as its bit pattern
// (ids are labels, and a raw 64-bit block hash is one).
func parseID(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(s, 10, 64)
		if uerr != nil {
			return 0, err
		}
		v = int64(u)
	}
	return v, nil
}

// quoteValue shows a value in an error, cut to a readable length.
func quoteValue(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	if s == "" {
		return "an empty value"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

// fieldError is a bad value of a record: "path:line: field: message".
func fieldError(path string, line int, field string, err error) error {
	return &sourceError{path: path, line: line, err: fmt.Errorf("%s: %w", field, err)}
}
