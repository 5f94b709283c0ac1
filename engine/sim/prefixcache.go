package sim

import (
	"container/list"
	"sync"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"
)

// BlockTokens is the number of prompt tokens in one prefix-cache block, as
// in vLLM's paged KV cache: only whole blocks are cached and reused.
const BlockTokens = 16

// prefixCache models an automatic prefix cache: the KV blocks of prompts
// seen before, keyed by the hash of the whole prompt up to each block's end,
// so a block is reused only when everything before it matches too. It
// evicts the least recently used blocks beyond its capacity. Safe for
// concurrent use.
type prefixCache struct {
	capacity int // in blocks

	mu     sync.Mutex
	lru    list.List // of uint64 block hashes, most recent first
	blocks map[uint64]*list.Element
}

// newPrefixCache returns a cache holding up to capacityTokens tokens, or nil
// (a cache that never hits) when that is less than one block.
func newPrefixCache(capacityTokens int) *prefixCache {
	if capacityTokens < BlockTokens {
		return nil
	}
	return &prefixCache{capacity: capacityTokens / BlockTokens, blocks: make(map[uint64]*list.Element)}
}

// admit returns how many tokens of a prompt with the given block hashes are
// already cached — the leading blocks found, up to the first miss — and
// then caches all of them, as a prefill leaves its blocks behind.
func (p *prefixCache) admit(hashes []uint64) (cachedTokens int) {
	if p == nil || len(hashes) == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	hits := 0
	for hits < len(hashes) && p.blocks[hashes[hits]] != nil {
		hits++
	}
	// Touch the last block first, so the shared root ends most recent and
	// eviction takes the tails of prompts before the prefixes others share.
	// Evicting only afterwards keeps a prompt from evicting its own blocks.
	for i := len(hashes) - 1; i >= 0; i-- {
		if e := p.blocks[hashes[i]]; e != nil {
			p.lru.MoveToFront(e)
		} else {
			p.blocks[hashes[i]] = p.lru.PushFront(hashes[i])
		}
	}
	for p.lru.Len() > p.capacity {
		delete(p.blocks, p.lru.Remove(p.lru.Back()).(uint64))
	}
	return hits * BlockTokens
}

// blockHashes cuts a prompt into BlockTokens-token blocks the way
// promptTokens counts it — a role marker of messageOverhead tokens, then
// the text, per message — and returns, for each whole block, the hash of
// the prompt from its start to the block's end. Tokens are counted in
// quarters as CountTokens does, so the blocks never hold more tokens than
// the prompt.
func blockHashes(msgs []openai.ChatCompletionMessage) []uint64 {
	b := blockCutter{h: fnvOffset}
	for i := range msgs {
		m := &msgs[i]
		text, _ := messageText(i, m) // validated already
		// The role marker of a chat template.
		b.write("\x00")
		b.write(m.Role)
		b.write("\x00")
		b.tokens += messageOverhead
		b.cut()
		b.text(text)
	}
	return b.hashes
}

// blockCutter accumulates a prompt and records a hash at each block end.
type blockCutter struct {
	h      uint64 // FNV-1a of the prompt so far, inline: hash.Hash64 would copy every piece to the heap
	tokens int    // whole tokens so far
	next   int    // the token count that ends the current block
	hashes []uint64
}

func (b *blockCutter) write(s string) {
	for i := 0; i < len(s); i++ {
		b.h = (b.h ^ uint64(s[i])) * fnvPrime
	}
}

// cut records a hash for every block boundary the count has passed.
func (b *blockCutter) cut() {
	if b.next == 0 {
		b.next = BlockTokens
	}
	for b.tokens >= b.next {
		b.hashes = append(b.hashes, b.h)
		b.next += BlockTokens
	}
}

// text adds one message's text, counted as CountTokens counts it.
func (b *blockCutter) text(s string) {
	start, quarters := 0, 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r < utf8.RuneSelf:
			quarters++
		case isCJK(r):
			quarters += 4
		default:
			quarters += 2
		}
		if quarters >= 4 {
			b.write(s[start:i])
			start = i
			b.tokens += quarters / 4
			quarters %= 4
			b.cut()
		}
	}
	b.write(s[start:])
	b.tokens += (quarters + 3) / 4
	// The rounded-up remainder is not cut: a partial token never completes a block.
}

// usage is the share of the cache's capacity in use, 0..1, as vLLM's
// kv_cache_usage_perc reports it; 0 for a disabled cache.
func (p *prefixCache) usage() float64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return float64(p.lru.Len()) / float64(p.capacity)
}
