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
