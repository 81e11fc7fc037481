package node

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/protocol"
)

// Probe answers the gateway's interest: for every asked binary name whether
// it exists on path (see FindBin), and which asked env-var names are set and
// non-empty in this process. It never reads out an env value beyond testing
// it for emptiness and never reports a name that was not asked. Env is sorted
// and de-duplicated; HostBinStatus has exactly the asked binary names, except
// names the protocol would refuse (empty or longer than
// protocol.MaxNameLen), which are left out so that a bad interest cannot make
// the gateway refuse this node's facts.
func Probe(path []string, interest protocol.Interest) protocol.FactsUpdate {
	u := protocol.FactsUpdate{
		Env:           []string{},
		HostBinStatus: make(map[string]bool, len(interest.Bins)),
	}
	for _, name := range interest.Bins {
		if name == "" || len(name) > protocol.MaxNameLen {
			continue
		}
		if len(u.HostBinStatus) >= protocol.MaxNames {
			break // more would get the facts refused; the rest count as absent
		}
		if _, done := u.HostBinStatus[name]; done {
			continue
		}
		u.HostBinStatus[name] = FindBin(path, name).Found != ""
	}
	for _, name := range interest.Env {
		if len(u.Env) >= protocol.MaxNames {
			break
		}
		if envSet(name) {
			u.Env = append(u.Env, name)
		}
	}
	slices.Sort(u.Env)
	u.Env = slices.Compact(u.Env)
	return u
}

// envSet reports whether the env var is set and non-empty. Names that cannot
// be env names are never set.
func envSet(name string) bool {
	if name == "" || len(name) > protocol.MaxNameLen || strings.ContainsAny(name, "=\x00") {
		return false
	}
	v, ok := os.LookupEnv(name)
	return ok && v != ""
}

// BinResult is the outcome of FindBin.
type BinResult struct {
	// Found is the path of the executable, "" if there is none.
	Found string
	// Rejected lists candidates that exist but do not count, with the
	// reason ("/usr/bin/x: not executable"), for a human reading `facts`.
	Rejected []string
}

// FindBin looks for a binary the way the gateway's `bins` requirement means
// it: a directory of path holds a regular file of that name (symlinks
// followed) with an executable bit set; on windows <name>.exe counts too and
// no executable bit is needed. Names that are empty, ".", contain a path
// separator or ".." are never looked up, so an interest cannot probe files
// outside the search path.
func FindBin(path []string, name string) BinResult {
	var r BinResult
	if !validBinName(name) {
		r.Rejected = append(r.Rejected, name+": not a plain file name, not looked up")
		return r
	}
	names := []string{name}
	if runtime.GOOS == "windows" && !strings.EqualFold(filepath.Ext(name), ".exe") {
		names = append(names, name+".exe")
	}
	for _, dir := range path {
		for _, n := range names {
			p := filepath.Join(dir, n)
			fi, err := os.Stat(p) // follows symlinks to the file
			if err != nil {
				// Only a permission problem is worth telling a human;
				// "no such file" is the normal miss.
				if errors.Is(err, fs.ErrPermission) {
					r.Rejected = append(r.Rejected, p+": "+err.Error())
				}
				continue
			}
			switch {
			case fi.IsDir():
				r.Rejected = append(r.Rejected, p+": is a directory")
			case !fi.Mode().IsRegular():
				r.Rejected = append(r.Rejected, p+": not a regular file")
			case !executable(fi.Mode()):
				r.Rejected = append(r.Rejected, p+": not executable")
			default:
				r.Found = p
				return r
			}
		}
	}
	return r
}

func executable(m fs.FileMode) bool {
	if runtime.GOOS == "windows" {
		return true // no executable bits; the name decides
	}
	return m&0o111 != 0
}

func validBinName(name string) bool {
	return name != "" && name != "." && len(name) <= protocol.MaxNameLen &&
		!strings.ContainsAny(name, `/\`+"\x00") && !strings.Contains(name, "..")
}
