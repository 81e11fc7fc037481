// Package bitset is a small set of non-negative integers stored as bits:
// host slots in the eligibility index, indexes into the interest list in
// the gateway's per-node facts. It owns the representation only, not what
// the bits mean, and imports nothing but math/bits: eligibility (which
// must never import the gateway) and the gateway both build on it.
package bitset

import "math/bits"

// Set is a set of small non-negative integers. The zero value is empty.
type Set []uint64

// Add puts i in the set, growing it as needed.
func (b *Set) Add(i int) {
	for i/64 >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

// Remove takes i out of the set.
func (b Set) Remove(i int) {
	if i/64 < len(b) {
		b[i/64] &^= 1 << (i % 64)
	}
}

// Has reports whether i is in the set.
func (b Set) Has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// Empty reports whether the set has no member.
func (b Set) Empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// Len returns the number of members.
func (b Set) Len() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Equal reports whether both sets have the same members.
func (b Set) Equal(o Set) bool {
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

// And keeps in b only the members also in o.
func (b Set) And(o Set) {
	n := min(len(b), len(o))
	for i := range n {
		b[i] &= o[i]
	}
	clear(b[n:])
}

// Or adds the members of o that fit in b's length.
func (b Set) Or(o Set) {
	for i, w := range o[:min(len(b), len(o))] {
		b[i] |= w
	}
}

// Each calls f for every member, in increasing order.
func (b Set) Each(f func(i int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi*64 + t)
			w &^= 1 << t
		}
	}
}
