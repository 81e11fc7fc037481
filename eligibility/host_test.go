package eligibility

import (
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/protocol"
)

// TestHostBuilder pins the one facts→host builder's output, field by field.
func TestHostBuilder(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Facts
		want Host
	}{
		{"empty", Facts{}, Host{ID: "n"}},
		{"os normalized", Facts{OS: " macOS "}, Host{ID: "n", OS: "darwin"}},
		{"osx", Facts{OS: "OSX"}, Host{ID: "n", OS: "darwin"}},
		{"win32", Facts{OS: "Win32"}, Host{ID: "n", OS: "windows"}},
		{"other os lowered", Facts{OS: "FreeBSD"}, Host{ID: "n", OS: "freebsd"}},
		{"sorted, no repeats",
			Facts{OS: "linux", Roles: []string{"specialized", "execution", "execution"}, Capabilities: []string{"shell.exec", "filesystem.read"},
				Env: []string{"B", "A", "B"}, Bins: []string{"jq", "gh", "jq"}},
			Host{ID: "n", OS: "linux", Roles: []string{"execution", "specialized"}, Capabilities: []string{"filesystem.read", "shell.exec"},
				Env: []string{"A", "B"}, Bins: []string{"gh", "jq"}}},
		{"empty lists kept empty",
			Facts{OS: "linux", Roles: []string{}, Env: []string{}},
			Host{ID: "n", OS: "linux", Roles: []string{}, Env: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b HostBuilder
			got := b.Build("n", &tc.f)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("Build = %#v, want %#v", *got, tc.want)
			}
		})
	}
}

// TestHostBuilderKeepsSortedLists checks that a list already a sorted set
// is kept, not copied, and that an unsorted one is copied, not sorted in
// place (reported lists are shared with the frame they came in).
func TestHostBuilderKeepsSortedLists(t *testing.T) {
	sorted := []string{"a", "b", "c"}
	unsorted := []string{"c", "a", "b"}
	var b HostBuilder
	h := b.Build("n", &Facts{Roles: sorted, Bins: unsorted})
	if &h.Roles[0] != &sorted[0] {
		t.Error("a sorted list was copied")
	}
	if !reflect.DeepEqual(unsorted, []string{"c", "a", "b"}) {
		t.Errorf("the reported list was changed: %v", unsorted)
	}
	if !reflect.DeepEqual(h.Bins, []string{"a", "b", "c"}) {
		t.Errorf("Bins = %v", h.Bins)
	}
}

// TestNewHost pins the conversion of reported facts: binaries present
// only, sorted; the rest as Build makes it.
func TestNewHost(t *testing.T) {
	f := protocol.HostFacts{ID: "h1", OS: "macos", Roles: []string{"execution"}, Capabilities: []string{"shell.exec", "filesystem.read", "shell.exec"},
		Env: []string{"TOKEN", "API_KEY"}, HostBinStatus: map[string]bool{"jq": true, "gh": true, "op": false}}
	want := Host{ID: "h1", OS: "darwin", Roles: []string{"execution"}, Capabilities: []string{"filesystem.read", "shell.exec"},
		Env: []string{"API_KEY", "TOKEN"}, Bins: []string{"gh", "jq"}}
	if got := NewHost(&f); !reflect.DeepEqual(*got, want) {
		t.Errorf("NewHost = %#v, want %#v", *got, want)
	}
	none := NewHost(&protocol.HostFacts{ID: "h2", HostBinStatus: map[string]bool{"op": false}})
	if none.Bins == nil || len(none.Bins) != 0 {
		t.Errorf("NewHost without binaries: Bins = %#v, want empty, not nil", none.Bins)
	}
}

// lookalike returns the facts of a node of one image, in fresh slices as
// each node's frames are decoded.
func lookalike(bins ...string) *Facts {
	return &Facts{OS: "linux", Roles: []string{"execution"}, Capabilities: []string{"filesystem.read", "shell.exec"},
		Env: []string{"API_KEY"}, Bins: append([]string(nil), bins...)}
}

// same reports whether two lists are one slice.
func same(a, b []string) bool { return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0] }

// TestHostBuilderSharesLists: nodes with identical facts share every list;
// a node whose binaries differ shares the rest; a new host for a node
// whose facts changed leaves the other's host as it was; and the table
// forgets a list once no host holds it.
func TestHostBuilderSharesLists(t *testing.T) {
	b := NewHostBuilder()
	a := b.Build("a", lookalike("gh", "jq"))
	c := b.Build("c", lookalike("gh", "jq"))
	if a == c || a.ID != "a" || c.ID != "c" {
		t.Fatalf("hosts a %p %q, c %p %q: want two hosts with their own ids", a, a.ID, c, c.ID)
	}
	for _, l := range [][2][]string{{a.Roles, c.Roles}, {a.Capabilities, c.Capabilities}, {a.Env, c.Env}, {a.Bins, c.Bins}} {
		if !same(l[0], l[1]) {
			t.Errorf("identical facts, lists not shared: %v and %v", l[0], l[1])
		}
	}
	if got := b.Shared(); got != 4 {
		t.Errorf("Shared() = %d after two look-alikes, want 4 lists", got)
	}

	// c's facts change: a new host for c; a's host is untouched.
	c2 := b.Build("c", lookalike("gh", "jq", "tmux"))
	b.Release(c)
	if !reflect.DeepEqual(*a, Host{ID: "a", OS: "linux", Roles: []string{"execution"}, Capabilities: []string{"filesystem.read", "shell.exec"},
		Env: []string{"API_KEY"}, Bins: []string{"gh", "jq"}}) {
		t.Errorf("a's host changed with c's facts: %#v", *a)
	}
	if !reflect.DeepEqual(c2.Bins, []string{"gh", "jq", "tmux"}) || same(c2.Bins, a.Bins) {
		t.Errorf("c's new Bins = %v (shared with a's: %v)", c2.Bins, same(c2.Bins, a.Bins))
	}
	if !same(c2.Roles, a.Roles) || !same(c2.Env, a.Env) {
		t.Error("c's new host does not share the lists that did not change")
	}
	if got := b.Shared(); got != 5 {
		t.Errorf("Shared() = %d, want 5 (roles, capabilities, env, two lists of binaries)", got)
	}

	// Released, a's lists stay in a (an older index may still hold it)
	// and leave the table once c2 is released too.
	b.Release(a)
	if !reflect.DeepEqual(a.Bins, []string{"gh", "jq"}) {
		t.Errorf("a released: Bins = %v", a.Bins)
	}
	if got := b.Shared(); got != 4 {
		t.Errorf("Shared() = %d after a is released, want 4 (c2's)", got)
	}
	b.Release(c2)
	if got := b.Shared(); got != 0 {
		t.Errorf("Shared() = %d with no host held, want 0", got)
	}
	// A new look-alike enters its own lists again.
	d := b.Build("d", lookalike("gh", "jq"))
	if same(d.Bins, a.Bins) || b.Shared() != 4 {
		t.Errorf("after every host was released: d shares a's Bins %v, Shared() = %d", same(d.Bins, a.Bins), b.Shared())
	}
}

// TestHostBuilderReleaseIgnoresOthers: releasing a host the builder did
// not build, or twice, drops no list another host holds.
func TestHostBuilderReleaseIgnoresOthers(t *testing.T) {
	b := NewHostBuilder()
	a := b.Build("a", lookalike("gh"))
	other := (*HostBuilder)(nil).Build("x", lookalike("gh"))
	b.Release(other)
	b.Release(nil)
	if got := b.Shared(); got != 4 {
		t.Fatalf("Shared() = %d after releasing a host of another builder, want 4", got)
	}
	c := b.Build("c", lookalike("gh"))
	if !same(c.Bins, a.Bins) {
		t.Error("a's lists left the table when another host was released")
	}
}

// TestHostBuilderCollisions: lists whose hashes collide are told apart,
// each shared and forgotten on its own.
func TestHostBuilderCollisions(t *testing.T) {
	b := NewHostBuilder()
	x, y, z := []string{"x"}, []string{"y"}, []string{"z"}
	// Every list under one hash: the chain, not the hash, decides.
	for _, l := range [][]string{x, y, z} {
		if got := b.shareAt(1, l); !same(got, l) {
			t.Fatalf("share %v: got %v, not itself", l, got)
		}
	}
	if got := b.shareAt(1, []string{"y"}); !same(got, y) {
		t.Fatalf("share of a list equal to y: got another slice %v", got)
	}
	b.unshareAt(1, y)             // y is held twice
	b.unshareAt(1, []string{"x"}) // an equal list, not x: ignored
	if b.Shared() != 3 {
		t.Fatalf("Shared() = %d, want 3", b.Shared())
	}
	for _, tc := range []struct {
		drop []string
		left int
	}{{y, 2}, {z, 1}, {x, 0}} { // the middle, the first, the last of the chain
		b.unshareAt(1, tc.drop)
		if b.Shared() != tc.left {
			t.Fatalf("after dropping %v: Shared() = %d, want %d", tc.drop, b.Shared(), tc.left)
		}
	}
	if len(b.lists) != 0 {
		t.Errorf("an empty chain left its key in the table")
	}
}
