package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Parts are what a plan's fingerprint is made of, kept in a segment's
// result and in its barrier ready file so that merge and the barrier can
// name what two segments disagree on. Everything but the seed is a
// digest, never a value: a --set value may be a secret.
type Parts struct {
	// Script is the SHA-256 of the scenario's source, in hex.
	Script string `json:"script"`
	// Seed is the run seed.
	Seed int64 `json:"seed"`
	// Params are the --set values, each key's value as a digest.
	Params map[string]string `json:"params,omitempty"`
	// Data are the data files the script's top level read (luabind's
	// Script.Files), each with the digest of its content.
	Data map[string]string `json:"data,omitempty"`
	// Shape is a digest of each part of the plan that shapes the load and
	// its judgement: warmup, scenarios, thresholds, metrics, slo.
	Shape map[string]string `json:"shape"`
}

// Parts describes p run from source with the --set values params and the
// data files whose digests are data (see DigestFiles); both may be nil.
func (p Plan) Parts(source []byte, params, data map[string]string) Parts {
	sum := sha256.Sum256(source)
	parts := Parts{Script: hex.EncodeToString(sum[:]), Seed: p.Seed, Data: maps.Clone(data)}
	if len(params) > 0 {
		parts.Params = make(map[string]string, len(params))
		for k, v := range params {
			parts.Params[k] = digest([]byte(v))
		}
	}
	parts.Shape = map[string]string{
		"warmup": digestJSON(p.Warmup), "scenarios": digestJSON(p.Scenarios),
		"thresholds": digestJSON(p.Thresholds), "metrics": digestJSON(p.Metrics), "slo": digestJSON(p.SLO),
	}
	return parts
}

// Fingerprint is one digest of all the parts: segments of one run have
// the same.
func (ps Parts) Fingerprint() string {
	// Parts holds strings and an integer, which always encode, and maps
	// encode with sorted keys, so the bytes are a function of the values.
	b, _ := json.Marshal(ps)
	return digest(b)
}

// Diff names what differs between a and b, for "differ in ...": the
// script, the seed, each --set key and data file ("the seed (1 and 2) and
// --set rate"); the plan's shape only when none of those differ, since
// any of them would explain it. "" when a and b are the same plan.
func Diff(a, b Parts) string {
	var out []string
	if a.Script != b.Script {
		out = append(out, fmt.Sprintf("the script (sha256 %s and %s)", short(a.Script), short(b.Script)))
	}
	if a.Seed != b.Seed {
		out = append(out, fmt.Sprintf("the seed (%d and %d)", a.Seed, b.Seed))
	}
	out = append(out, diffMaps("--set ", "set for", a.Params, b.Params)...)
	out = append(out, diffMaps("data file ", "read by", a.Data, b.Data)...)
	if len(out) == 0 {
		if shape := diffMaps("", "", a.Shape, b.Shape); len(shape) > 0 {
			out = []string{"the plan's shape (" + strings.Join(shape, ", ") + ")"}
		}
	}
	return JoinAnd(out)
}

// JoinAnd joins phrases as "a", "a and b", "a, b and c".
func JoinAnd(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// diffMaps names the keys whose digests differ, prefixed; a key only one
// side has says so ("only one" after verb), unless verb is "".
func diffMaps(prefix, verb string, a, b map[string]string) []string {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case inA != inB && verb != "":
			out = append(out, fmt.Sprintf("%s%s (%s only one)", prefix, k, verb))
		case va != vb || inA != inB:
			out = append(out, prefix+k)
		}
	}
	return out
}

// DigestFiles reads the data files names (relative ones from dir, as
// luabind's Script.Files gives them) and returns each one's digest.
func DigestFiles(dir string, names []string) (map[string]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(names))
	for _, name := range names {
		path := name
		if !filepath.IsAbs(name) {
			path = filepath.Join(dir, filepath.FromSlash(name))
		}
		d, err := digestFile(path)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", name, err)
		}
		out[name] = d
	}
	return out, nil
}

// digestFile hashes a file as it streams, since a data file may be large.
func digestFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// digest is the first 16 hex digits of b's SHA-256: enough to tell
// plans apart, short enough to read in a message.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// digestJSON digests v's JSON; only the plan's own plain types go in,
// which always encode.
func digestJSON(v any) string {
	b, _ := json.Marshal(v)
	return digest(b)
}

// short abbreviates a hex digest for a message.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
