package search

import (
	"reflect"
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	got := Terms("GitHub-admin: manage repos_v2, Überprüfung 日本語!")
	want := []string{"github", "admin", "manage", "repos", "v2", "überprüfung", "日本語"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

func TestScores(t *testing.T) {
	docs := []Doc{
		{"github", "Interact with GitHub using the gh CLI: issues, pull requests."},
		{"tmux", "Remote-control tmux sessions."},
		{"summarize", "Summarize web pages and GitHub issues."},
		{"weather", "Current weather and forecasts."},
	}
	rank := func(q string) []int {
		s := Scores(q, docs)
		var idx []int
		for i, v := range s {
			if v > 0 {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case s[a] > s[b]:
				return -1
			case s[a] < s[b]:
				return 1
			}
			return 0
		})
		return idx
	}
	for q, want := range map[string][]int{
		"github issues": {0, 2}, // the name counts more
		"weather":       {3},
		"TMUX session":  {1}, // case-insensitive; "session" is not "sessions"
		"nothing":       nil,
		"":              nil,
	} {
		if got := rank(q); !reflect.DeepEqual(got, want) {
			t.Errorf("rank(%q) = %v, want %v (scores %v)", q, got, want, Scores(q, docs))
		}
	}
	a, b := Scores("github", docs), Scores("github", docs)
	if !reflect.DeepEqual(a, b) {
		t.Error("scores differ between two identical calls")
	}
}
