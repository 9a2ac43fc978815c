package sim

import (
	"hash/maphash"
	"sync"

	"github.com/speedmatrix/speedmatrix/sim/engine"
	"github.com/speedmatrix/speedmatrix/sim/tokenizer"
)

// promptCache remembers the token ids and block hashes of the last few prompt texts, so that
// the C workers of a benchmark cell sending the same long prompt again and again cost one
// tokenization, not one per request: at a high speedup the real time spent tokenizing a 1M-token
// prompt would otherwise exceed the frontend time the profile models.
type promptCache struct {
	seed      maphash.Seed
	tok       *tokenizer.Tokenizer
	blockSize int

	mu      sync.Mutex
	entries []promptEntry // most recent last
}

type promptEntry struct {
	key    uint64
	text   string
	ids    []int
	hashes []uint64
}

// promptCacheSize is the number of prompts remembered.
const promptCacheSize = 8

func newPromptCache(tok *tokenizer.Tokenizer, blockSize int) *promptCache {
	return &promptCache{seed: maphash.MakeSeed(), tok: tok, blockSize: blockSize}
}

// encode returns the token ids and prefix-cache block hashes of text; callers must not modify
// them.
func (c *promptCache) encode(text string) ([]int, []uint64) {
	key := maphash.String(c.seed, text)
	c.mu.Lock()
	for i := len(c.entries) - 1; i >= 0; i-- {
		if e := c.entries[i]; e.key == key && e.text == text {
			c.mu.Unlock()
			return e.ids, e.hashes
		}
	}
	c.mu.Unlock()
	ids := c.tok.Encode(text)
	hashes := engine.BlockHashes(ids, c.blockSize)
	c.mu.Lock()
	if len(c.entries) == promptCacheSize {
		c.entries = append(c.entries[:0], c.entries[1:]...)
	}
	c.entries = append(c.entries, promptEntry{key: key, text: text, ids: ids, hashes: hashes})
	c.mu.Unlock()
	return ids, hashes
}
