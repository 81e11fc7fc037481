package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "8b7c426abcdef0123456789"}, {Key: "vcs.modified", Value: "false"}}
	dirty := []debug.BuildSetting{{Key: "vcs.revision", Value: "8b7c426abcdef0123456789"}, {Key: "vcs.modified", Value: "true"}}
	tests := []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"", nil, "0.1.0-dev"},
		{"(devel)", nil, "0.1.0-dev"},
		{"(devel)", rev, "0.1.0-dev+8b7c426abcde"},
		{"(devel)", dirty, "0.1.0-dev+8b7c426abcde.dirty"},
		{"v1.2.3", rev, "1.2.3"},
		{"v1.2.3+dirty", dirty, "1.2.3+dirty"},
		{"v0.0.0-20261123101010-8b7c426abcde", rev, "0.1.0-dev+8b7c426abcde"},
		{"v0.0.0-20261123101010-8b7c426abcde+dirty", dirty, "0.1.0-dev+8b7c426abcde.dirty"},
		{"v1.2.4-0.20261123101010-8b7c426abcde", rev, "0.1.0-dev+8b7c426abcde"},
		{"v1.3.0-rc.1.0.20261123101010-8b7c426abcde", nil, "0.1.0-dev"},
		{"v1.3.0-rc.1", nil, "1.3.0-rc.1"},
	}
	for _, tt := range tests {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/skillgate/skillgate", Version: tt.main}, Settings: tt.settings}
		if got := fromBuildInfo(bi); got != tt.want {
			t.Errorf("main %q, settings %v: %q, want %q", tt.main, tt.settings, got, tt.want)
		}
	}
}

// TestStringInTests: a test binary carries no module version and no VCS
// stamp, so String is Base — what the other packages' tests expect.
func TestStringInTests(t *testing.T) {
	if got := String(); got != Base {
		t.Errorf("String() = %q in a test binary, want %q", got, Base)
	}
}
