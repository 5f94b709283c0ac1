// Command vocabgen writes the vocabularies engine/tokenize embeds, one
// file per tiktoken encoding, from github.com/tiktoken-go/tokenizer at the
// version go.mod requires: that library's counts are the ones llmload has
// always given, so its vocabulary is the reference. Run it with
// `go generate ./engine/tokenize` after changing that version.
//
// A file is gzip (no name, no time, so the bytes depend only on the
// vocabulary and Go's compress/flate) of, for every id from 0 to the
// largest, one length byte and the token's bytes; a length of 0 marks an
// id with no token (p50k_base's 50256, a special token's). The linked
// vocabulary is then about 2 MB, where the library's map literals cost
// 11 MB of every build for the one encoding a run uses.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tiktoken-go/tokenizer"
)

// maxID bounds the ids probed: above o200k_base's 200k, below where
// probing would cost time.
const maxID = 1 << 20

func main() {
	dir := flag.String("dir", "vocab", "directory to write the files into")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, name := range flag.Args() {
		if err := write(*dir, name); err != nil {
			log.Fatalf("vocabgen: %s: %v", name, err)
		}
	}
}

func write(dir, name string) error {
	c, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return err
	}
	raw, err := table(c)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".gz"), out.Bytes(), 0o644)
}

// table lays out the tokens by id. The library has no call that lists its
// vocabulary, but decoding one id at a time gives each token's bytes, and
// an error for an id it has no token for.
func table(c tokenizer.Codec) ([]byte, error) {
	pieces := make([]string, 0, 1<<18)
	for id := uint(0); id < maxID; id++ {
		s, err := c.Decode([]uint{id})
		if err != nil {
			s = ""
		}
		if len(s) > 255 {
			return nil, fmt.Errorf("token %d is %d bytes, more than a length byte holds", id, len(s))
		}
		pieces = append(pieces, s)
	}
	for len(pieces) > 0 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	var b []byte
	for _, p := range pieces {
		b = append(b, byte(len(p)))
		b = append(b, p...)
	}
	return b, nil
}
