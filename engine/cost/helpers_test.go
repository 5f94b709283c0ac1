package cost

import (
	"testing"

	"github.com/llmload/llmload/engine/tokenize"
)

func testCodec(t testing.TB) tokenize.Codec {
	t.Helper()
	codec, err := tokenize.Get("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return codec
}
