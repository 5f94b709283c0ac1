package tokenize

import "math"

// merge yields the ids byte-pair encoding splits piece into, piece being
// no token itself: while some adjacent pair of parts is a token, the pair
// of the lowest id (tiktoken's merge rank) is merged, the leftmost of
// equals first. That is tiktoken's algorithm, and tiktoken-go/tokenizer's,
// whose ids the tests hold this to. Candidate pairs wait in a heap, so a
// piece costs O(n log n): a 20 kB run of one character, which is one
// piece, merges in 8 ms, where rescanning every pair after each merge
// (pkoukk/tiktoken-go's merge) takes half a second, and a 100 kB one in a
// dirty prompt would take ten.
func (v *vocabulary) merge(piece string, yield func(uint)) {
	// On the stack for the short pieces that are nearly all of them.
	var partBuf [64]part
	var pairBuf [64]pair
	m := merger{v: v, piece: piece, end: int32(len(piece)), parts: partBuf[:0], heap: pairBuf[:0]}.start()
	for len(m.heap) > 0 {
		var p pair
		p, m.heap = m.heap.pop()
		m = m.join(p)
	}
	for at := int32(0); at < m.end; at = m.parts[at].next {
		yield(v.ids[piece[at:m.parts[at].next]])
	}
}

// noRank marks a part that makes no token with the next one, or that a
// merge removed.
const noRank = math.MaxUint32

// part is a part of the piece, named by the offset of its first byte: the
// parts are a list linked by offsets, ending at the piece's length.
type part struct {
	prev, next int32
	rank       uint32 // of this part joined with the next, or noRank
}

// merger is one piece being merged. Its methods take and return it by
// value: through a pointer, the compiler would move the buffers to the
// heap.
type merger struct {
	v     *vocabulary
	piece string
	end   int32
	parts []part
	heap  pairHeap
}

// start makes each byte a part and queues the pairs that are tokens.
func (m merger) start() merger {
	for i := range m.end + 1 {
		m.parts = append(m.parts, part{prev: i - 1, next: i + 1, rank: noRank})
	}
	for at := int32(0); at+1 < m.end; at++ {
		m = m.rerank(at)
	}
	return m
}

// join merges the pair p named, unless a merge since it was queued
// changed that pair: then its part's rank differs (a rank names one
// token, and the pair now spans other bytes) or the part is gone.
func (m merger) join(p pair) merger {
	left := &m.parts[p.at]
	if left.rank != p.rank {
		return m
	}
	gone := left.next
	left.next = m.parts[gone].next
	m.parts[gone].rank = noRank
	if left.next < m.end {
		m.parts[left.next].prev = p.at
	}
	m = m.rerank(p.at)
	if left.prev >= 0 {
		m = m.rerank(left.prev)
	}
	return m
}

// rerank sets the rank of the part at and its next one, and queues the
// pair if it is a token.
func (m merger) rerank(at int32) merger {
	p := &m.parts[at]
	p.rank = noRank
	if p.next >= m.end {
		return m
	}
	if id, ok := m.v.ids[m.piece[at:m.parts[p.next].next]]; ok {
		p.rank = uint32(id)
		m.heap = m.heap.push(pair{rank: p.rank, at: at})
	}
	return m
}

// pair is a candidate merge: the part at at with its next one.
type pair struct {
	rank uint32
	at   int32
}

// pairHeap is a min-heap of pairs by rank, then offset. It is typed, not
// container/heap, so that a push does not allocate; push and pop return
// the heap rather than update it through a pointer, which keeps a heap on
// the stack there.
type pairHeap []pair

func (h pairHeap) less(i, j int) bool {
	return h[i].rank < h[j].rank || h[i].rank == h[j].rank && h[i].at < h[j].at
}

func (h pairHeap) push(p pair) pairHeap {
	h = append(h, p)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	return h
}

func (h pairHeap) pop() (pair, pairHeap) {
	top, last := h[0], len(h)-1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		child := 2*i + 1
		if child >= len(h) {
			break
		}
		if r := child + 1; r < len(h) && h.less(r, child) {
			child = r
		}
		if !h.less(child, i) {
			break
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
	return top, h
}
