package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The broken items of the media dirty-data kinds: each a file that a
// careless server might accept and a careful one refuses with a 400. They
// are made once per process (their seed and bound are the key) and
// shared like every other item.

// Truncated returns the first half of it, labelled as it: a file cut
// short in transit.
func Truncated(it *Item) *Item {
	return cached("truncated:"+it.Name, func() *Item {
		return Raw(it.Name+" (truncated)", it.Info, it.data[:len(it.data)/2])
	})
}

// Mislabeled returns a PNG image sent as a JPEG: its data URL says
// image/jpeg.
func Mislabeled(seed uint64) (*Item, error) {
	src, err := SyntheticImage(ImageSpec{Width: 64, Height: 64, Format: "png"}, seed, -1)
	if err != nil {
		return nil, err
	}
	return cached(fmt.Sprint("mislabeled:", seed), func() *Item {
		info := src.Info
		info.Format, info.MIME = "jpeg", "image/jpeg"
		return Raw("a png labelled image/jpeg", info, src.data)
	}), nil
}

// ZeroPixel returns a PNG whose header says 0×0 pixels, with valid CRCs,
// so only a decoder that checks the dimensions refuses it.
func ZeroPixel() *Item {
	return cached("zeropixel", func() *Item {
		var b bytes.Buffer
		b.WriteString("\x89PNG\r\n\x1a\n")
		ihdr := make([]byte, 13)
		ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB; width and height stay 0
		pngChunk(&b, "IHDR", ihdr)
		pngChunk(&b, "IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
		pngChunk(&b, "IEND", nil)
		return Raw("a png of 0×0 pixels", Info{Kind: Image, Format: "png", MIME: "image/png"}, b.Bytes())
	})
}

func pngChunk(b *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}

// Oversize returns a valid JPEG padded with comment segments to just
// beyond limit bytes (0: DefaultMaxBytes): a whole image, only too large.
func Oversize(limit int, seed uint64) (*Item, error) {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	src, err := SyntheticImage(ImageSpec{Width: 64, Height: 64}, seed, -2)
	if err != nil {
		return nil, err
	}
	return cached(fmt.Sprint("oversize:", limit, ":", seed), func() *Item {
		out := make([]byte, 0, limit+70000)
		out = append(out, src.data[:2]...) // SOI
		seg := make([]byte, 65533)
		for i := range seg {
			seg[i] = 'x'
		}
		for len(out)+len(src.data) <= limit {
			out = append(out, 0xFF, 0xFE, 0xFF, 0xFF) // COM, length 65535
			out = append(out, seg...)
		}
		out = append(out, src.data[2:]...)
		return Raw(fmt.Sprintf("a jpeg of %s, beyond %s", Bytes(int64(len(out))), Bytes(int64(limit))), src.Info, out)
	}), nil
}

// LyingHeader returns a WAV whose data chunk claims ten times the
// samples the file holds.
func LyingHeader(seed uint64) (*Item, error) {
	src, err := SyntheticAudio(AudioSpec{Seconds: 1}, seed, -1)
	if err != nil {
		return nil, err
	}
	return cached(fmt.Sprint("lying:", seed), func() *Item {
		data := bytes.Clone(src.data)
		binary.LittleEndian.PutUint32(data[40:], uint32(10*(len(data)-44)))
		info := src.Info
		info.Seconds *= 10
		return Raw("a wav whose header claims 10× its samples", info, data)
	}), nil
}

// BadBase64 returns it with its base64 text broken: characters outside
// the alphabet every few hundred bytes and the padding cut off.
func BadBase64(it *Item) *Item {
	return cached("badbase64:"+it.Name, func() *Item {
		b := bytes.Clone(it.Base64())
		for i := 100; i < len(b); i += 997 {
			b[i] = '*'
		}
		b = bytes.TrimRight(b, "=")
		if len(b)%4 == 0 && len(b) > 0 {
			b = b[:len(b)-1]
		}
		return withBase64(it.Name+" (bad base64)", it.Info, it.data, b)
	})
}

// cached memoizes the broken items, which cannot fail once their source
// is made.
func cached(key string, make func() *Item) *Item {
	it, _ := Memo("broken:"+key, func() (*Item, error) { return make(), nil })
	return it
}
