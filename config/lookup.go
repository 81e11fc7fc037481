package config

import (
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/ident"
)

var (
	settingsByPath = map[string]*Setting{}
	objectsByPath  = map[string]*object{}
	// children lists skillgate's keys directly below each object, in
	// table order.
	children = map[string][]string{}
)

func init() {
	// Keys in the order the table first names them: every prefix of a
	// setting's path is a key of its parent.
	for i := range Settings {
		s := &Settings[i]
		settingsByPath[s.Path] = s
		for j := range s.Path {
			if s.Path[j] == '.' {
				addChild(s.Path[:j])
			}
		}
		addChild(s.Path)
	}
	for i := range objects {
		o := &objects[i]
		objectsByPath[o.Path] = o
		addChild(o.Path)
	}
}

// addChild records a path as a key of its parent object.
func addChild(p string) {
	if p == "" {
		return
	}
	parent, key := split(p)
	// Wildcards ("<id>") are not keys; "list[]" is the element of the
	// agents.list setting.
	if strings.HasPrefix(key, "<") || strings.HasSuffix(key, "[]") {
		return
	}
	for _, k := range children[parent] {
		if k == key {
			return
		}
	}
	children[parent] = append(children[parent], key)
}

// split cuts a pattern into its parent and last key.
func split(p string) (parent, key string) {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

func settingAt(pattern string) *Setting { return settingsByPath[pattern] }

func objectAt(pattern string) *object { return objectsByPath[pattern] }

// ownKeys are skillgate's keys of an object.
func ownKeys(pattern string) []string { return children[pattern] }

// knownKeys are skillgate's and OpenClaw's keys of an object.
func knownKeys(pattern string) []string {
	return append(append([]string(nil), children[pattern]...), openClawKeys[pattern]...)
}

func validID(id string) error { return ident.Validate(id) }

// nearest returns the known key that k is a likely typo of, or "": one
// within two edits (insertions, deletions, substitutions or swaps of
// neighbours, letter case ignored), or one edit for keys of four
// characters or fewer, where two edits turn most short words into others
// ("port" and "poll").
func nearest(k string, known []string) string {
	best, bestD := "", 3
	lk := strings.ToLower(k)
	for _, c := range known {
		if c == k {
			return ""
		}
		limit := 2
		if utf8.RuneCountInString(c) <= 4 {
			limit = 1
		}
		if d := editDistance(lk, strings.ToLower(c)); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b
// (Levenshtein plus swaps of two neighbouring characters).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	if len(x) > 64 || len(y) > 64 {
		return 1 << 20 // not a typo of a key: keys are short
	}
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
