package bitset

import (
	"reflect"
	"testing"
)

func TestSet(t *testing.T) {
	var a Set
	for _, i := range []int{0, 63, 64, 200} {
		a.Add(i)
	}
	var got []int
	a.Each(func(i int) { got = append(got, i) })
	if !reflect.DeepEqual(got, []int{0, 63, 64, 200}) || a.Len() != 4 || !a.Has(64) || a.Has(65) || a.Has(1000) {
		t.Fatalf("members %v, len %d", got, a.Len())
	}
	var b Set
	b.Add(63)
	b.Add(200)
	c := append(Set(nil), a...)
	c.And(b)
	if !c.Equal(b) || c.Equal(a) {
		t.Errorf("And: %v", c)
	}
	short := Set{1} // {0}
	c.And(short)
	if !c.Empty() {
		t.Errorf("And with a shorter set keeps %v", c)
	}
	d := make(Set, len(a))
	d.Or(b)
	d.Or(Set{1})
	d.Remove(200)
	d.Remove(5000)
	var want Set
	want.Add(0)
	want.Add(63)
	if !d.Equal(want) {
		t.Errorf("Or/Remove: %v", d)
	}
}
