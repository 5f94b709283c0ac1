package dataset

import (
	"fmt"
	"strings"
	"sync"

	"github.com/llmload/llmload/engine/tokenize"
)

// commonWords are frequent English words of plain lowercase letters: with a
// leading space almost all are one token in every tiktoken encoding, and
// the ones that are not are dropped per encoding at init.
var commonWords = strings.Fields(`
	the of and to in is that for it as with was on be by this are or from
	at an which but not have one all can were their more has been its when
	will would there what about if out up into so them some could time these
	two may then do first any my now such like our over man me even most made
	after also did many before must through back years where much your way
	well down should because each just those people how too little state good
	very make world still own see men work long get here between both life
	being under never day same another know while last might us great old year
	off come since against go came right used take three states himself few
	house use during without again place around however home small found
	thought went say part once general high upon school every does got united
	left number course war until always away something fact though water less
	public put think almost hand enough far took head yet government system
	better set told nothing night end why called didn find look asked later
	knew point city next program business give group toward young days let
	room president side social given present several order national possible
	rather second face per among form often important things looked early
	white case john become large big need four within felt along children saw
	best church ever least power development light thing seemed family
	interest want members mind country area others although turned done open
	god service certain kind problem began different door thus help means
	sense whole matter perhaps itself york times law human line above name
	example action company hands local show whether five history gave today
	either act feet across taken past quite anything seen having death week
	experience body word half really field am car words already information
	tell together college shall money period held keep sure free real seems
	behind cannot miss political air question making office brought whose
	special heard major problems ago became federal moment study available
	known result street economic boy position reason change south board
	individual job areas society west close turn love community true court
	force full seem am model data value cache queue server stream answer
	request input output layer memory token batch load test user query
`)

// wordSets caches, per encoding, the words that are one token with a
// leading space, each stored with that space.
var wordSets sync.Map // encoding name → []string

// minWords is the fewest single-token words an encoding must offer for the
// text to look varied; every tiktoken encoding offers hundreds.
const minWords = 100

// wordContext is the text a candidate word is counted after: a word
// inside a prompt is never its start, which SentencePiece tokenizers
// (Llama 2, Mistral) mark with a token of its own.
const wordContext = "a"

// singleTokenWords returns the words of commonWords that codec encodes to
// one token when they follow another word with a space, each with that
// space.
func singleTokenWords(codec tokenize.Codec) ([]string, error) {
	if v, ok := wordSets.Load(codec.Name()); ok {
		return v.([]string), nil
	}
	var words []string
	seen := map[string]bool{}
	base := codec.Count(wordContext)
	for _, w := range commonWords {
		if sw := " " + w; !seen[w] && codec.Count(wordContext+sw)-base == 1 {
			seen[w] = true
			words = append(words, sw)
		}
	}
	if len(words) < minWords {
		return nil, fmt.Errorf("tokenizer %s has only %d single-token words, want %d", codec.Name(), len(words), minWords)
	}
	v, _ := wordSets.LoadOrStore(codec.Name(), words)
	return v.([]string), nil
}
