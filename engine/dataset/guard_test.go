package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// writeFile writes content to name in a fresh directory, gzipped when the
// name ends in .gz, and returns its path.
func writeFile(tb testing.TB, name string, content []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(name, ".gz") {
		zw = gzip.NewWriter(f)
		w = zw
	}
	if _, err := w.Write(content); err != nil {
		tb.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// randomBytes are n bytes that no text file holds.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestLoadRefusesBadContent(t *testing.T) {
	random := randomBytes(4 << 10)
	longLine := bytes.Repeat([]byte("a"), 50<<20) // gzip makes it 50 KB on disk
	tests := []struct {
		name, loader, file string
		content            []byte
		want               string // the error, after the file's path
	}{
		{"random text", "text", "r.txt", random, ":1: binary data ("},
		{"random text gz", "text", "r.txt.gz", random, ":1: binary data ("},
		{"random jsonl", "jsonl", "r.jsonl", random, ":1: binary data ("},
		{"random csv gz", "csv", "r.csv.gz", random, ":1: binary data ("},
		{"random sharegpt", "sharegpt", "r.json", random, ":1: binary data ("},
		{"nul in line 2", "text", "n.txt", []byte("fine\nbad\x00line\n"), ":2: binary data (a NUL byte at column 4)"},
		{"latin-1", "csv", "l.csv", []byte("prompt\ncaf\xe9\n"), ":2: binary data (invalid UTF-8 byte 0xe9 at column 4)"},
		{"cut character at end", "text", "c.txt", []byte("ok\n\xe4\xb8"), ":2: binary data (invalid UTF-8 byte 0xe4 at column 1 (cut by the end of the file))"},
		{"control characters", "text", "ctl.txt", []byte("ab\x01\x02\x03cdefgh\n"), ":1: binary data (3 of 11 bytes are control characters)"},
		{"utf-16", "text", "u16.txt", []byte("\xff\xfeh\x00i\x00"), ":1: binary data (invalid UTF-8 byte 0xff at column 1)"},
		{"50 MB line", "text", "long.txt.gz", longLine, ":1: line longer than 16 MB"},
		{"50 MB line jsonl", "jsonl", "long.jsonl", append([]byte("{\"prompt\": \"x\"}\n"), longLine...), ":2: line longer than 16 MB"},
		{"50 MB line csv", "csv", "long.csv.gz", append([]byte("prompt\n"), longLine...), ":2: line longer than 16 MB"},
		{"50 MB record", "sharegpt", "long.json.gz", append(append([]byte(`[{"conversations": [{"from": "human", "value": "`), longLine...), `"}]}]`...), ":1: record longer than 16 MB"},
		{"gz name, plain bytes", "csv", "plain.csv.gz", nil, ": named .gz but not gzip data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			if tt.content == nil { // a plain file under a .gz name
				path = writeFile(t, "plain.csv", []byte("prompt\nhello\n"))
				if err := os.Rename(path, path+".gz"); err != nil {
					t.Fatal(err)
				}
				path += ".gz"
			} else {
				path = writeFile(t, tt.file, tt.content)
			}
			p, err := loaders[tt.loader](path, Options{})
			if err == nil {
				t.Fatalf("loaded %d items (first %.40q), want an error", p.Len(), p.Item(0).Text)
			}
			if got, want := err.Error(), path+tt.want; !strings.HasPrefix(got, want) {
				t.Errorf("error = %.200q,\nwant it to start with %q", got, want)
			}
		})
	}
}

func TestLoadKeepsText(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{"tabs and CRLF", "a\tb\r\nc\r\n", []string{"a\tb", "c"}},
		{"one escape in a line", "\x1b[1mbold\x1b[0m text here, and more\n", []string{"\x1b[1mbold\x1b[0m text here, and more"}},
		{"no final newline", "x\ny", []string{"x", "y"}},
		{"multi-byte", "什么是机器学习？\n😀", []string{"什么是机器学习？", "😀"}},
		{"line of the limit", strings.Repeat("z", MaxLineBytes) + "\n", []string{strings.Repeat("z", MaxLineBytes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := loaders["text"](writeFile(t, "ok.txt.gz", []byte(tt.content)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(p); !slices.Equal(got, tt.want) {
				t.Errorf("prompts = %.80q, want %.80q", got, tt.want)
			}
		})
	}
}

func TestLoadStopsWithContext(t *testing.T) {
	path := writeFile(t, "p.txt", []byte("a\nb\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := LoadText(ctx, path)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if want := path + ":1: loading interrupted"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want it to start with %q", err, want)
	}
	if _, err := LoadText(context.Background(), path); err != nil {
		t.Errorf("a canceled load was cached: %v", err)
	}
}

func TestGuardTotalLimit(t *testing.T) {
	g := newGuard(context.Background(), "f.txt", strings.NewReader(strings.Repeat("line\n", 100)), limits{maxTotal: 256})
	_, err := io.Copy(io.Discard, g)
	if want := "more than 0 MB of content"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestLineReaderIsLinear reads a 4 MB and a 32 MB line: 8 times the
// bytes must take about 8 times as long, where bufio.Scanner's rescans of
// a growing buffer took 64 times. The bound is generous and each size
// keeps its fastest of three runs, so a busy machine does not fail it.
func TestLineReaderIsLinear(t *testing.T) {
	read := func(size int) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 3 {
			r := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("a"), size)), strings.NewReader("\nend\n"))
			g := newGuard(context.Background(), "f", r, limits{maxLine: 64 << 20})
			start := time.Now()
			var scanned int
			err := scanLines(bufio.NewReaderSize(g, 1<<16), func(_ int, b []byte) error {
				scanned += len(b)
				return nil
			})
			best = min(best, time.Since(start))
			if err != nil || scanned != size+3 {
				t.Fatalf("scanned %d bytes, err %v; want %d bytes", scanned, err, size+3)
			}
		}
		return best
	}
	small, large := read(4<<20), read(32<<20)
	t.Logf("4 MB line: %v, 32 MB line: %v", small, large)
	if got, limit := float64(large)/float64(small), 24.0; got > limit {
		t.Errorf("a line 8 times longer took %.1f times as long, want at most %.0f (linear is 8)", got, limit)
	}
}

// BenchmarkLongLine loads a gzipped file of one line just under the limit;
// before the guard, a 300 MB line never finished.
func BenchmarkLongLine(b *testing.B) {
	path := writeFile(b, "long.txt.gz", append(bytes.Repeat([]byte("a"), MaxLineBytes), '\n'))
	for b.Loop() {
		if _, err := loadText(context.Background(), path); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(MaxLineBytes)
}

// FuzzLineReader feeds arbitrary bytes to the guarded line reader with a
// small line limit and checks it against a plain split: what it accepts
// is the same lines, and what it refuses is really refusable.
func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "a", "a\nb", "a\r\nb\r\n", "\n\n", "\x00", "caf\xe9", "什么\n", "\xe4\xb8",
		"\x01\x02\x03", "a\x1bb", strings.Repeat("x", 40), "\xef\xbf\xbd", "\xf0\x9f\x98\x80\n"} {
		f.Add([]byte(s), 16)
	}
	f.Fuzz(func(t *testing.T, data []byte, bufSize int) {
		const maxLine = 32
		g := newGuard(context.Background(), "f", &oneByteSometimes{data: data, n: bufSize}, limits{maxLine: maxLine})
		var got []string
		err := scanLines(bufio.NewReaderSize(g, 16), func(_ int, b []byte) error {
			got = append(got, string(b))
			return nil
		})
		want := referenceLines(data)
		if err != nil {
			var se *sourceError
			if !errors.As(err, &se) || se.line < 1 || se.line > len(want)+1 {
				t.Fatalf("err = %v, want a sourceError within the %d lines", err, len(want))
			}
			if refusable(data, maxLine) {
				return
			}
			t.Fatalf("refused %q: %v", data, err)
		}
		if refusable(data, maxLine) {
			t.Fatalf("accepted %q", data)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("lines = %q, want %q", got, want)
		}
	})
}

// oneByteSometimes reads data in pieces of varying size, so characters and
// line endings fall across reads.
type oneByteSometimes struct {
	data []byte
	n    int
}

func (r *oneByteSometimes) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.n = r.n*31 + 7
	k := min(len(p), len(r.data), 1+(r.n&0xff)%23)
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

// referenceLines splits data as the line reader should.
func referenceLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// refusable tells whether data breaks a rule: not UTF-8, a NUL, a line
// too long or mostly control characters.
func refusable(data []byte, maxLine int) bool {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return true
	}
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if len(line) > maxLine {
			return true
		}
		ctrl := 0
		for _, c := range line {
			if c < 0x20 && c != '\t' && c != '\r' || c == 0x7f {
				ctrl++
			}
		}
		if ctrl >= minCtrl && ctrl*ctrlShare > len(line) {
			return true
		}
	}
	return false
}
