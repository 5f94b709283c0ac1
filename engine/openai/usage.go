package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	gojson "github.com/goccy/go-json"
)

// usage is a usage object as servers send it, decoded leniently: it is
// metadata about the answer, so a nonsense count (negative, fractional, a
// string, out of range) is unknown rather than an error, and a usage or
// details member of the wrong JSON type is ignored (see usageShapeError).
// Whether a known count is also plausible is decided once the whole answer
// is known (see tally). It is decoded in place by the enclosing decoder,
// which costs no allocation per chunk.
type usage struct {
	Prompt        tokenCount    `json:"prompt_tokens"`
	Completion    tokenCount    `json:"completion_tokens"`
	Details       usageDetails  `json:"completion_tokens_details"`
	PromptDetails promptDetails `json:"prompt_tokens_details"`
}

type usageDetails struct {
	Reasoning tokenCount `json:"reasoning_tokens"`
}

// promptDetails holds the prompt tokens served from the prefix cache, as
// vLLM (--enable-prompt-tokens-details), SGLang and OpenAI report them.
type promptDetails struct {
	Cached tokenCount `json:"cached_tokens"`
}

// known reports whether u holds any count.
func (u *usage) known() bool { return u.Prompt.ok || u.Completion.ok || u.Details.Reasoning.ok }

// usageShapeError reports a decoding error caused only by a usage member
// of the wrong JSON type ("usage": 5): unknown usage, not a broken event.
func usageShapeError(err error) bool {
	if err == nil {
		return false // without the allocation errors.As costs
	}
	var te *json.UnmarshalTypeError
	var gte *gojson.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return te.Field == "usage" || strings.HasPrefix(te.Field, "usage.")
	case errors.As(err, &gte):
		return gte.Field == "usage" || strings.HasPrefix(gte.Field, "usage.")
	}
	return false
}

// maxTokenCount bounds a believable token count; larger is nonsense.
const maxTokenCount = math.MaxInt32

// tokenCount is one count of a usage object, known only when ok.
type tokenCount struct {
	n  int
	ok bool
}

// UnmarshalJSON accepts a non-negative integer, also written as an
// integral float (12.0, 1.2e1); anything else leaves the count unknown
// and is no error.
func (c *tokenCount) UnmarshalJSON(b []byte) error {
	*c = tokenCount{}
	b = bytes.TrimSpace(b)
	if n, ok := digits(b); ok {
		if n <= maxTokenCount {
			*c = tokenCount{n, true}
		}
		return nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return nil // null, string, object, array, bool
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err == nil && f >= 0 && f <= maxTokenCount && f == math.Trunc(f) {
		*c = tokenCount{int(f), true}
	}
	return nil
}

// digits parses a plain decimal integer of at most 18 digits without
// allocating, the shape of nearly every count.
func digits(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
