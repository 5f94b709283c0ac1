package sim

import (
	"math/rand/v2"
	"strings"
)

// vocabulary holds short, common words so that the generated text counts
// roughly one token per word, like a real model's output.
var vocabulary = strings.Fields(`
	the of and to in is that for it as with was on be by this are or from
	at an which but not have one all can were their more has been its when
	model token batch load time data test user query value cache queue
	fast slow large small first last next other each many some new long
	server stream answer result request input output layer weight memory
`)

// wordSource produces the pseudo-words of one answer, one per token: a
// deterministic function of its seed. Not safe for concurrent use.
type wordSource struct {
	rng      *rand.Rand
	started  bool
	sentence bool // the next word starts a sentence
	stop     bool // the next token is the full stop ending a sentence
}

func newWordSource(key uint64, seed int64) *wordSource {
	// A different stream from drawLength's, so the text does not echo it.
	return &wordSource{rng: rand.New(rand.NewPCG(key^0x9e3779b97f4a7c15, uint64(seed))), sentence: true}
}

// next returns the next token's text: a word with its leading space, or
// now and then the full stop ending a sentence — a token of its own, as in
// real tokenizers, so the simulator's usage matches a client-side count.
func (w *wordSource) next() string {
	if w.stop {
		w.stop, w.sentence = false, true
		return "."
	}
	word := vocabulary[w.rng.IntN(len(vocabulary))]
	if w.sentence {
		word = strings.ToUpper(word[:1]) + word[1:]
		w.sentence = false
	}
	w.stop = w.rng.IntN(12) == 0
	if w.started {
		word = " " + word
	}
	w.started = true
	return word
}
