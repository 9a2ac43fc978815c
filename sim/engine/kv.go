package engine

// blockPool is the KV cache: a fixed number of blocks of blockSize tokens, reference-counted so
// that the blocks of a shared prompt prefix count once, with vLLM's prefix cache on top: full
// prompt blocks are registered under the hash of their token prefix and stay cached after their
// requests end, until the pool needs them again (least recently freed first).
type blockPool struct {
	blockSize int
	ref       []int32
	hash      []uint64
	hashed    []bool
	// The free queue holds every block with ref == 0, cached or blank, least recently freed at
	// the head; it is an intrusive doubly linked list over block ids.
	prev, next []int32
	head, tail int32
	nfree      int
	cache      map[uint64]int32
}

func newBlockPool(numBlocks, blockSize int) *blockPool {
	p := &blockPool{
		blockSize: blockSize,
		ref:       make([]int32, numBlocks),
		hash:      make([]uint64, numBlocks),
		hashed:    make([]bool, numBlocks),
		prev:      make([]int32, numBlocks),
		next:      make([]int32, numBlocks),
		head:      -1,
		tail:      -1,
		cache:     make(map[uint64]int32),
	}
	for i := range numBlocks {
		p.pushTail(int32(i))
	}
	return p
}

func (p *blockPool) pushTail(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
	p.nfree++
}

func (p *blockPool) unlink(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.prev[b], p.next[b] = -1, -1
	p.nfree--
}

// used returns the number of blocks held by at least one request.
func (p *blockPool) used() int { return len(p.ref) - p.nfree }

// alloc takes the least recently freed block, evicting its cached prefix if it has one.
func (p *blockPool) alloc() int32 {
	b := p.head
	p.unlink(b)
	if p.hashed[b] {
		if p.cache[p.hash[b]] == b {
			delete(p.cache, p.hash[b])
		}
		p.hashed[b] = false
	}
	p.ref[b] = 1
	return b
}

// touch takes one more reference on a cached block found by a prefix lookup.
func (p *blockPool) touch(b int32) {
	if p.ref[b] == 0 {
		p.unlink(b)
	}
	p.ref[b]++
}

// release drops one reference; a block nobody holds goes to the tail of the free queue, keeping
// its cached prefix.
func (p *blockPool) release(b int32) {
	p.ref[b]--
	if p.ref[b] == 0 {
		p.pushTail(b)
	}
}

// register records block b as holding the prompt prefix with hash h, unless another block
// already holds it (then b stays uncached, as in vLLM).
func (p *blockPool) register(b int32, h uint64) {
	if _, ok := p.cache[h]; ok || p.hashed[b] {
		return
	}
	p.cache[h] = b
	p.hash[b], p.hashed[b] = h, true
}

// lookup returns the cached blocks holding the longest prefix of hashes.
func (p *blockPool) lookup(hashes []uint64, max int) []int32 {
	var hit []int32
	for i := 0; i < len(hashes) && i < max; i++ {
		b, ok := p.cache[hashes[i]]
		if !ok {
			break
		}
		hit = append(hit, b)
	}
	return hit
}
