package traces

import (
	"encoding/hex"
	"errors"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf body is read with protowire rather than proto.Unmarshal:
// a vLLM span carries a dozen attributes, and building a message, a
// KeyValue, an AnyValue and its oneof box for each, only to read five of
// them, cost several times the 2 µs a span may take. This reader walks the
// bytes and copies out only the request attributes. Field numbers are
// those of opentelemetry/proto/{collector/trace,trace,resource,common}/v1.
const (
	fExportResourceSpans = 1 // ExportTraceServiceRequest.resource_spans
	fResourceResource    = 1 // ResourceSpans.resource
	fResourceScopeSpans  = 2 // ResourceSpans.scope_spans
	fResourceAttributes  = 1 // Resource.attributes
	fScopeSpans          = 2 // ScopeSpans.spans
	fSpanTraceID         = 1
	fSpanSpanID          = 2
	fSpanName            = 5
	fSpanAttributes      = 9
	fKeyValueKey         = 1
	fKeyValueValue       = 2
	fAnyString           = 1
	fAnyInt              = 3
	fAnyDouble           = 4
)

var errWire = errors.New("malformed protobuf")

// field is one decoded field: its number and, for the length-delimited
// and numeric types, its content.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	b    []byte
	u    uint64
	rest []byte
}

// next reads the first field of b.
func next(b []byte) (field, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, errWire
	}
	f := field{num: num, typ: typ}
	b = b[n:]
	switch typ {
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(b)
	case protowire.VarintType:
		f.u, n = protowire.ConsumeVarint(b)
	case protowire.Fixed64Type:
		f.u, n = protowire.ConsumeFixed64(b)
	case protowire.Fixed32Type:
		var u uint32
		u, n = protowire.ConsumeFixed32(b)
		f.u = uint64(u)
	default:
		n = protowire.ConsumeFieldValue(num, typ, b)
	}
	if n < 0 {
		return field{}, errWire
	}
	f.rest = b[n:]
	return f, nil
}

// each calls fn for every field of b.
func each(b []byte, fn func(field) error) error {
	for len(b) > 0 {
		f, err := next(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = f.rest
	}
	return nil
}

// message is the content of a length-delimited field of number num; ok is
// false for another field. As in proto.Unmarshal, a field of the right
// number with another wire type is an unknown field, skipped.
func (f field) message(num protowire.Number) ([]byte, bool, error) {
	if f.num != num || f.typ != protowire.BytesType {
		return nil, false, nil
	}
	return f.b, true, nil
}

// decodeWire decodes a protobuf ExportTraceServiceRequest into b.
func decodeWire(body []byte, b *batch) error {
	return each(body, func(f field) error {
		rs, ok, err := f.message(fExportResourceSpans)
		if !ok {
			return err
		}
		return decodeResourceSpans(rs, b)
	})
}

func decodeResourceSpans(rs []byte, b *batch) error {
	// The resource may follow its spans on the wire: find it first.
	service, found := "", false
	err := each(rs, func(f field) error {
		res, ok, err := f.message(fResourceResource)
		if !ok || err != nil || found {
			return err
		}
		service, found, err = wireServiceName(res)
		return err
	})
	if err != nil {
		return err
	}
	return each(rs, func(f field) error {
		ss, ok, err := f.message(fResourceScopeSpans)
		if !ok {
			return err
		}
		return each(ss, func(f field) error {
			sp, ok, err := f.message(fScopeSpans)
			if !ok {
				return err
			}
			return decodeWireSpan(sp, service, b)
		})
	})
}

func wireServiceName(res []byte) (name string, found bool, err error) {
	err = each(res, func(f field) error {
		kv, ok, err := f.message(fResourceAttributes)
		if !ok || err != nil || found {
			return err
		}
		key, v, err := wireKeyValue(kv, func(k []byte) bool { return string(k) == attrServiceName })
		if err == nil && key == attrServiceName {
			name, found = v.s, true // "" when not a string, as GetStringValue gives
		}
		return err
	})
	return name, found, err
}

func decodeWireSpan(sp []byte, service string, b *batch) error {
	var traceID, spanID, name []byte
	s := newServerSpan(service, "")
	known, bad := false, false
	err := each(sp, func(f field) error {
		var err error
		switch f.num {
		case fSpanTraceID:
			traceID = last(f, traceID)
		case fSpanSpanID:
			spanID = last(f, spanID)
		case fSpanName:
			name = last(f, name)
		case fSpanAttributes:
			kv, ok, _ := f.message(fSpanAttributes)
			if !ok {
				return nil
			}
			key, v, err := wireKeyValue(kv, func(k []byte) bool { return knownKey(string(k)) })
			if err == nil && key != "" {
				known = true
				bad = !applyAttr(&s, key, v) || bad
			}
			return err
		}
		return err
	})
	if err != nil {
		return err
	}
	b.received++
	switch {
	case !validID(traceID, 16) || !validID(spanID, 8):
		b.rejected++
	case !known:
		b.other++
	default:
		s.Name = string(name)
		if bad {
			b.malformed++
		}
		b.spans = append(b.spans, Span{TraceID: hex.EncodeToString(traceID), SpanID: hex.EncodeToString(spanID), Server: s})
	}
	return nil
}

// last keeps a bytes field's content: as in protobuf, the last one of a
// singular field wins.
func last(f field, prev []byte) []byte {
	if b, ok, _ := f.message(f.num); ok {
		return b
	}
	return prev
}

// wireKeyValue reads a KeyValue; the value is decoded only when want
// accepts the key, and key is "" otherwise. The key's last occurrence
// wins; values repeated are merged, as proto.Unmarshal merges a singular
// message field.
func wireKeyValue(kv []byte, want func([]byte) bool) (string, value, error) {
	var keyB []byte
	err := each(kv, func(f field) error {
		if f.num == fKeyValueKey {
			keyB = last(f, keyB)
		}
		return nil
	})
	if err != nil || !want(keyB) {
		return "", value{}, err
	}
	var v value
	err = each(kv, func(f field) error {
		if b, ok, _ := f.message(fKeyValueValue); ok {
			return wireValue(b, &v)
		}
		return nil
	})
	return string(keyB), v, err
}

// wireValue merges an AnyValue's fields into v; a member of the oneof the
// decoder does not read makes it valueOther, as it would replace the
// member in a protobuf message.
func wireValue(b []byte, v *value) error {
	return each(b, func(f field) error {
		switch t := f.typ; {
		case f.num == fAnyString && t == protowire.BytesType:
			*v = value{kind: valueString, s: string(f.b)}
		case f.num == fAnyInt && t == protowire.VarintType:
			*v = value{kind: valueInt, i: int64(f.u)}
		case f.num == fAnyDouble && t == protowire.Fixed64Type:
			*v = value{kind: valueDouble, f: math.Float64frombits(f.u)}
		case (f.num == 2 || f.num == 8) && t == protowire.VarintType, // bool, string index
			(f.num == 5 || f.num == 6 || f.num == 7) && t == protowire.BytesType: // array, kvlist, bytes
			*v = value{}
		}
		return nil
	})
}
