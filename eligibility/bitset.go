package eligibility

import "math/bits"

// bitset is a set of host slots.
type bitset []uint64

func (b *bitset) set(i int) {
	for i/64 >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) clear(i int) {
	if i/64 < len(b) {
		b[i/64] &^= 1 << (i % 64)
	}
}

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// and keeps in b only what is also in o.
func (b bitset) and(o bitset) {
	n := min(len(b), len(o))
	for i := range n {
		b[i] &= o[i]
	}
	clear(b[n:])
}

// or adds o to b; b must be at least as long as o.
func (b bitset) or(o bitset) {
	for i, w := range o[:min(len(b), len(o))] {
		b[i] |= w
	}
}

// each calls f for every member, in increasing order.
func (b bitset) each(f func(i int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi*64 + t)
			w &^= 1 << t
		}
	}
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
