package sim

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Defect behaviours besides an HTTP status.
const (
	DefectHang     = "hang"     // never answer, until the client gives up or Close
	DefectReset    = "reset"    // close the connection at once, with a TCP reset and no response
	DefectTruncate = "truncate" // start a 200 answer, then cut the connection mid-body
)

// truncateAfterWrites is how many events a truncated stream sends (the role
// chunk and a few content chunks) before the connection is cut.
const truncateAfterWrites = 4

// errTruncated ends generation for a "truncate" defect.
var errTruncated = errors.New("sim: truncated on purpose")

// DefectBehaviours describes the behaviours Config.Defects accepts.
func DefectBehaviours() []string {
	return []string{"200 (answer normally, even if invalid)", "an HTTP error status 400-599 such as 500, 502 or 503", DefectHang, DefectReset, DefectTruncate}
}

// ParseDefects parses "kind=behaviour" specs, such as the values of
// repeated --defect flags ("overlong=500", "bad_role=hang"), into a map for
// Config.Defects. A bad spec's error names it and lists what is valid.
func ParseDefects(specs []string) (map[string]string, error) {
	defects := make(map[string]string, len(specs))
	for _, spec := range specs {
		kind, behaviour, ok := strings.Cut(spec, "=")
		kind, behaviour = strings.TrimSpace(kind), strings.TrimSpace(behaviour)
		if !ok {
			return nil, fmt.Errorf("sim: defect %q: want kind=behaviour, such as overlong=500", spec)
		}
		if err := checkDefect(kind, behaviour); err != nil {
			return nil, fmt.Errorf("sim: defect %q: %w", spec, err)
		}
		if prev, dup := defects[kind]; dup && prev != behaviour {
			return nil, fmt.Errorf("sim: defect %q: kind %s already set to %s", spec, kind, prev)
		}
		defects[kind] = behaviour
	}
	return defects, nil
}

// checkDefect reports an unknown kind or behaviour, listing the valid ones.
func checkDefect(kind, behaviour string) error {
	if !slices.Contains(DirtyKinds(), kind) {
		return fmt.Errorf("unknown dirty-data kind %q; valid kinds: %s", kind, strings.Join(DirtyKinds(), ", "))
	}
	if _, ok := defectStatus(behaviour); ok {
		return nil
	}
	switch behaviour {
	case DefectHang, DefectReset, DefectTruncate:
		return nil
	}
	return fmt.Errorf("unknown defect behaviour %q for %s; valid behaviours: %s", behaviour, kind, strings.Join(DefectBehaviours(), ", "))
}

// defectStatus parses a status behaviour: 200 or an error status.
func defectStatus(behaviour string) (int, bool) {
	code, err := strconv.Atoi(behaviour)
	if err != nil || (code != http.StatusOK && (code < 400 || code > 599)) {
		return 0, false
	}
	return code, true
}

// validDefects keeps the valid entries of m, as New keeps valid values only.
func validDefects(m map[string]string) map[string]string {
	var valid map[string]string
	for kind, behaviour := range m {
		if checkDefect(kind, behaviour) == nil {
			if valid == nil {
				valid = make(map[string]string, len(m))
			}
			valid[kind] = behaviour
		}
	}
	return valid
}

// misbehave answers in with the defect behaviour chosen for its kind.
func (s *Server) misbehave(w http.ResponseWriter, r *http.Request, in *incoming, behaviour string) {
	s.defects.Add(1)
	switch behaviour {
	case DefectHang:
		ctx, cancel := s.requestContext(r.Context())
		defer cancel()
		<-ctx.Done()
		if r.Context().Err() == nil { // Close: an empty 200 would be an answer
			reset(w)
		}
	case DefectReset:
		reset(w)
	case DefectTruncate:
		tw := &truncator{ResponseWriter: w}
		s.answer(tw, r, in.completion(&s.cfg))
		cut(w)
	default:
		code, _ := defectStatus(behaviour)
		if code == http.StatusOK {
			s.answer(w, r, in.completion(&s.cfg))
			return
		}
		newAPIError(code, "", "simulated defect: status %d for a %s request", code, in.kind()).writeFor(w, in.api)
	}
}

// reset closes the connection with a TCP reset before any response. Where
// hijacking is impossible (HTTP/2, a recorder) it aborts the handler, which
// resets the stream.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	// Any TCP connection, also one the listener wrapped to keep receive
	// times (rxtime.Conn), lingers.
	if tc, ok := conn.(interface{ SetLinger(sec int) error }); ok {
		_ = tc.SetLinger(0) // RST instead of FIN
	}
	_ = conn.Close()
}

// cut closes the connection after what was written, without the end of the
// chunked body, so the client sees the body end early. Where hijacking is
// impossible the handler just returns, leaving a stream without [DONE].
func cut(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if conn, _, err := rc.Hijack(); err == nil {
		_ = conn.Close()
	}
}

// truncator lets a few writes through and fails the rest: a stream stops
// after truncateAfterWrites events, a whole answer after half its bytes.
type truncator struct {
	http.ResponseWriter
	writes int
}

func (t *truncator) Write(p []byte) (int, error) {
	if t.writes >= truncateAfterWrites {
		return 0, errTruncated
	}
	t.writes++
	if !strings.HasPrefix(t.Header().Get("Content-Type"), "text/event-stream") {
		t.writes = truncateAfterWrites
		n, _ := t.ResponseWriter.Write(p[:len(p)/2])
		return n, errTruncated
	}
	return t.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (t *truncator) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// streamField finds "stream": true in a body that does not decode.
var streamField = regexp.MustCompile(`"stream"\s*:\s*true`)

// fallbackCompletion is the answer a defective server gives to a request it
// should have rejected: prompt tokens estimated on the raw body (even with
// a tokenizer: the body need not be text, nor small), the default output
// limit, streamed if the body seems to ask for it.
func fallbackCompletion(cfg *Config, body []byte, api apiKind) *completion {
	h := fnv.New64a()
	_, _ = h.Write(body)
	prompt := min(CountTokens(string(body))+replyPrimer, cfg.MaxContext-1)
	c := &completion{
		stream:       streamField.Match(body),
		includeUsage: bytes.Contains(body, []byte(`"include_usage"`)),
		promptTokens: prompt,
		key:          h.Sum64(),
		api:          api,
	}
	if api == apiEmbeddings {
		c.stream, c.embed = false, &embedJob{inputs: []string{string(body)}, dims: DefaultEmbeddingDims}
	}
	c.outputTokens, c.finish = drawLength(cfg, c.key, max(1, min(cfg.DefaultMaxTokens, cfg.MaxContext-prompt)), extensions{})
	return c
}
