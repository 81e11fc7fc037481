// Package version is the one source of the version of skillgate's three
// programs: what `skillgate version`, `skillgate-node --version` and
// `skillgate-fleet version` print, and what the node agent sends as
// "skillgate-node/<version>" in connect.
//
// The version comes from the build: the main module's version when the
// binary was built from a tagged module (go install …@v1.2.3, or go build
// in a checkout at a tag: "1.2.3"), else Base with the commit the build
// stamped ("0.1.0-dev+8b7c426abcde", ".dirty" added for a modified tree),
// else Base alone (go test, go run, builds without VCS information).
// A packager may set it outright with
//
//	-ldflags "-X github.com/skillgate/skillgate/internal/version.stamp=1.2.3"
//
// It imports only the standard library, and nothing imports it but the
// cmd packages and node.
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
)

// Base is the version of a build that carries no release tag.
const Base = "0.1.0-dev"

// stamp, set with -ldflags -X, overrides what the build information says.
var stamp string

// String returns the version of this binary (see the package comment).
func String() string { return get() }

var get = sync.OnceValue(func() string {
	if stamp != "" {
		return stamp
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Base
	}
	return fromBuildInfo(bi)
})

// pseudo matches the part of a Go pseudo-version after its base
// (v0.0.0-20261123101010-8b7c426abcde, v1.2.4-0.20261123101010-…): such
// a version names a commit, not a release.
var pseudo = regexp.MustCompile(`-(?:[0-9a-z.]+\.)?[0-9]{14}-[0-9a-f]{12}(?:\+dirty)?$`)

// fromBuildInfo derives the version from a binary's build information.
func fromBuildInfo(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v != "" && v != "(devel)" && !pseudo.MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	var rev string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Base
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v = Base + "+" + rev
	if dirty {
		v += ".dirty"
	}
	return v
}
