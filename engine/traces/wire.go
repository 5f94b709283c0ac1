package traces

import (
	"encoding/binary"
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
	// Nearly every field of a span is a one-byte tag and a one-byte length:
	// read those without protowire's general varint loops.
	if len(b) >= 2 && b[0] < 0x80 && b[1] < 0x80 && b[0]&7 == byte(protowire.BytesType) && b[0] >= 8 {
		if n := int(b[1]); n <= len(b)-2 {
			return field{num: protowire.Number(b[0] >> 3), typ: protowire.BytesType, b: b[2 : 2+n], rest: b[2+n:]}, nil
		}
	}
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

// The readers below loop over next by hand rather than through a
// callback: a closure capturing the loop's state escapes to the heap, one
// allocation per attribute.

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
	if b.spans == nil {
		// A vLLM span takes some 400 bytes on the wire: room for them all
		// at once rather than growing the slice span by span.
		b.spans = make([]Span, 0, len(body)/400+1)
	}
	for len(body) > 0 {
		f, err := next(body)
		if err != nil {
			return err
		}
		body = f.rest
		if rs, ok, _ := f.message(fExportResourceSpans); ok {
			if err := decodeResourceSpans(rs, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeResourceSpans(rs []byte, b *batch) error {
	// The resource may follow its spans on the wire: find it first.
	service, found := "", false
	for p := rs; len(p) > 0; {
		f, err := next(p)
		if err != nil {
			return err
		}
		p = f.rest
		if res, ok, _ := f.message(fResourceResource); ok && !found {
			if service, found, err = wireServiceName(res); err != nil {
				return err
			}
		}
	}
	for p := rs; len(p) > 0; {
		f, _ := next(p) // the pass above checked every field
		p = f.rest
		ss, ok, _ := f.message(fResourceScopeSpans)
		for ok && len(ss) > 0 {
			g, err := next(ss)
			if err != nil {
				return err
			}
			ss = g.rest
			if sp, isSpan, _ := g.message(fScopeSpans); isSpan {
				if err := decodeWireSpan(sp, service, b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func wireServiceName(res []byte) (name string, found bool, err error) {
	for len(res) > 0 {
		f, err := next(res)
		if err != nil {
			return "", false, err
		}
		res = f.rest
		kv, ok, _ := f.message(fResourceAttributes)
		if !ok || found {
			continue
		}
		key, v, err := wireKeyValue(kv, serviceKey)
		if err != nil {
			return "", false, err
		}
		if key == attrServiceName {
			name, found = v.s, true // "" when not a string, as GetStringValue gives
		}
	}
	return name, found, nil
}

func serviceKey(k []byte) string {
	if string(k) == attrServiceName {
		return attrServiceName
	}
	return ""
}

func requestKey(k []byte) string { return requestAttr(k) }

func decodeWireSpan(sp []byte, service string, b *batch) error {
	var traceID, spanID, name []byte
	s := newServerSpan(service, "")
	known, bad := false, false
	for i := 0; i < len(sp); {
		num, typ, v, j := wireField(sp, i)
		if j < 0 {
			return errWire
		}
		i = j
		if typ != protowire.BytesType {
			continue
		}
		// As in protobuf, the last of a singular field wins.
		switch num {
		case fSpanTraceID:
			traceID = v
		case fSpanSpanID:
			spanID = v
		case fSpanName:
			name = v
		case fSpanAttributes:
			key, val, err := wireAttr(v)
			if err != nil {
				return err
			}
			if key != "" {
				known = true
				bad = !applyAttr(&s, key, val) || bad
			}
		}
	}
	b.received++
	switch {
	case !validID(traceID, 16) || !validID(spanID, 8):
		b.rejected++
	case !known:
		b.other++
	default:
		s.Name = spanName(name)
		if bad {
			b.malformed++
		}
		b.spans = append(b.spans, spanWithIDs(traceID, spanID, s))
	}
	return nil
}

// wireField reads the field at b[i:]: its number, its wire type, the
// content of a length-delimited one, and where the next field starts
// (j < 0 when the bytes are malformed). A span is read field by field
// with it, so its fast path is the shape of nearly every span field: a
// one-byte tag and a one-byte length.
func wireField(b []byte, i int) (num protowire.Number, typ protowire.Type, v []byte, j int) {
	if i+1 < len(b) {
		t, n := b[i], int(b[i+1])
		if t >= 8 && t < 0x80 && t&7 == byte(protowire.BytesType) && n < 0x80 && n <= len(b)-i-2 {
			return protowire.Number(t >> 3), protowire.BytesType, b[i+2 : i+2+n], i + 2 + n
		}
	}
	f, err := next(b[i:])
	if err != nil {
		return 0, 0, nil, -1
	}
	return f.num, f.typ, f.b, len(b) - len(f.rest)
}

// wireAttr reads a span's KeyValue when its key is a request attribute
// (the key is then the attribute's constant) and returns "" for any
// other key without reading its value.
func wireAttr(kv []byte) (string, value, error) {
	// Nearly every KeyValue is its key, then one value, each with a
	// one-byte length.
	if len(kv) >= 2 && kv[0] == byte(fKeyValueKey<<3|protowire.BytesType) && kv[1] < 0x80 && int(kv[1]) <= len(kv)-2 {
		k := int(kv[1]) + 2
		if rest := kv[k:]; len(rest) >= 2 && rest[0] == byte(fKeyValueValue<<3|protowire.BytesType) && rest[1] < 0x80 && int(rest[1]) == len(rest)-2 {
			key := requestAttr(kv[2:k])
			if key == "" {
				return "", value{}, nil
			}
			var v value
			return key, v, wireAnyValue(rest[2:], &v)
		}
	}
	return wireKeyValue(kv, requestKey)
}

// wireAnyValue reads an AnyValue of one field, a request attribute's
// usual shape, without the general loop of wireValue.
func wireAnyValue(b []byte, v *value) error {
	switch {
	case len(b) == 9 && b[0] == fAnyDouble<<3|byte(protowire.Fixed64Type):
		*v = value{kind: valueDouble, f: math.Float64frombits(binary.LittleEndian.Uint64(b[1:]))}
		return nil
	case len(b) >= 2 && len(b) <= 11 && b[0] == fAnyInt<<3|byte(protowire.VarintType):
		if u, n := protowire.ConsumeVarint(b[1:]); n == len(b)-1 {
			*v = value{kind: valueInt, i: int64(u)}
			return nil
		}
	}
	return wireValue(b, v)
}

// spanName is the span's name, vLLM's without a copy.
func spanName(name []byte) string {
	if string(name) == "llm_request" {
		return "llm_request"
	}
	return string(name)
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
// names the key (its constant, so the key is not copied), and key is ""
// otherwise. The key's last occurrence
// wins; values repeated are merged, as proto.Unmarshal merges a singular
// message field.
func wireKeyValue(kv []byte, want func([]byte) string) (string, value, error) {
	// Nearly every KeyValue is its key, then one value, each with a
	// one-byte length: read that shape without the general loop, and
	// skip the value of a key not wanted without reading it.
	if len(kv) >= 2 && kv[0] == byte(fKeyValueKey<<3|protowire.BytesType) && kv[1] < 0x80 && int(kv[1]) <= len(kv)-2 {
		keyB, rest := kv[2:2+int(kv[1])], kv[2+int(kv[1]):]
		if len(rest) >= 2 && rest[0] == byte(fKeyValueValue<<3|protowire.BytesType) && rest[1] < 0x80 && int(rest[1]) == len(rest)-2 {
			key := want(keyB)
			if key == "" {
				return "", value{}, nil
			}
			var v value
			return key, v, wireValue(rest[2:], &v)
		}
	}
	var keyB, valB []byte
	values := 0
	for p := kv; len(p) > 0; {
		f, err := next(p)
		if err != nil {
			return "", value{}, err
		}
		p = f.rest
		switch f.num {
		case fKeyValueKey:
			keyB = last(f, keyB)
		case fKeyValueValue:
			if b, ok, _ := f.message(fKeyValueValue); ok {
				valB = b
				values++
			}
		}
	}
	key := want(keyB)
	if key == "" {
		return "", value{}, nil
	}
	var v value
	if values <= 1 {
		return key, v, wireValue(valB, &v)
	}
	for p := kv; len(p) > 0; { // a value in parts: merge them in order
		f, _ := next(p) // the pass above checked every field
		p = f.rest
		if b, ok, _ := f.message(fKeyValueValue); ok {
			if err := wireValue(b, &v); err != nil {
				return "", value{}, err
			}
		}
	}
	return key, v, nil
}

// wireValue merges an AnyValue's fields into v; a member of the oneof the
// decoder does not read makes it valueOther, as it would replace the
// member in a protobuf message.
func wireValue(b []byte, v *value) error {
	for len(b) > 0 {
		f, err := next(b)
		if err != nil {
			return err
		}
		b = f.rest
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
	}
	return nil
}
