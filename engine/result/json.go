package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Errors ReadJSON returns, wrapped with detail.
var (
	ErrTruncated      = errors.New("result file is truncated")
	ErrNotResult      = errors.New("not an llmload result file")
	ErrSchemaVersion  = errors.New("unsupported result schema_version")
	errMissingVersion = fmt.Errorf("%w: no schema_version", ErrNotResult)
)

// WriteJSON writes r as indented JSON, as ReadJSON reads it.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // URLs with & stay readable
	return enc.Encode(r)
}

// ReadJSON reads a result written by JSON. It checks schema_version before
// anything else, so a file from another llmload version fails clearly
// rather than decoding into half-filled fields.
func ReadJSON(r io.Reader) (*Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: empty input", ErrNotResult)
	}
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, decodeError(err)
	}
	switch {
	case probe.SchemaVersion == nil:
		return nil, errMissingVersion
	case *probe.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("%w %d: this llmload reads version %d",
			ErrSchemaVersion, *probe.SchemaVersion, SchemaVersion)
	}
	res := &Result{}
	if err := json.Unmarshal(data, res); err != nil {
		return nil, decodeError(err)
	}
	return res, nil
}

// decodeError turns encoding/json's errors into ones a user can act on.
func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.Contains(err.Error(), "unexpected end of JSON input"):
		return fmt.Errorf("%w: the JSON ends early (was the run killed while writing?)", ErrTruncated)
	case errors.As(err, &syn):
		return fmt.Errorf("%w: invalid JSON at byte %d: %v", ErrNotResult, syn.Offset, err)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("%w: the file holds a JSON %s, not an object", ErrNotResult, typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("%w: field %q holds a %s, want %s", ErrNotResult, typ.Field, typ.Value, typ.Type)
	default:
		return fmt.Errorf("%w: %v", ErrNotResult, err)
	}
}
