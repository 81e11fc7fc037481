package gateway

import "math/bits"

// bitset is a small set of indexes into a list of names.
type bitset []uint64

func (b *bitset) set(i int) {
	for i/64 >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) equal(o bitset) bool {
	for i := range max(len(b), len(o)) {
		var x, y uint64
		if i < len(b) {
			x = b[i]
		}
		if i < len(o) {
			y = o[i]
		}
		if x != y {
			return false
		}
	}
	return true
}

func (b bitset) each(f func(i int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi*64 + t)
			w &^= 1 << t
		}
	}
}
