package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/promptbuild"
)

// Prompt budget defaults (gateway.prompt).
const (
	DefaultMaxChars  = config.DefaultMaxChars
	DefaultMaxSkills = config.DefaultMaxSkills
)

// Host hints of gateway.prompt.hosts.
const (
	HostsNone  = config.HostsNone
	HostsCount = config.HostsCount
	HostsNames = config.HostsNames
)

// budget is the block budget of prompt settings.
func budget(p config.Prompt) promptbuild.Budget {
	return promptbuild.Budget{MaxChars: p.MaxChars, MaxSkills: p.MaxSkills}
}

// tokenMatches compares a presented token with a configured one (the token,
// or "sha256:<hex>" of it) in constant time.
func tokenMatches(got, want string) bool {
	if h, ok := strings.CutPrefix(want, "sha256:"); ok {
		sum := sha256.Sum256([]byte(got))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(h)) == 1
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
