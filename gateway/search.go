package gateway

import (
	"cmp"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/search"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// Search limits of GET /v1/agents/{id}/skills?q=…&limit=N.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 10000
	// MaxQueryBytes and MaxQueryTerms bound q: a search costs a pass over
	// every skill per distinct term (O1: 3,000 words took 0.3 CPU-s).
	MaxQueryBytes = 512
	MaxQueryTerms = 32
	// searchWait is how long a search waits for a turn when
	// maxSearches are running, before it is answered 429.
	searchWait = 2 * time.Second
)

// maxSearches bounds the searches ranking at once: prompt builds and node
// events must keep their cores.
var maxSearches = max(2, runtime.GOMAXPROCS(0))

// SearchAnswer is the answer of GET /v1/agents/{id}/skills with eligible,
// q or limit: the matching skill objects, best first when q is given.
type SearchAnswer struct {
	Agent  string        `json:"agent"`
	Query  string        `json:"query"`
	Skills []ScoredSkill `json:"skills"`
}

// ScoredSkill is a /skills skill object with its relevance to the query
// (BM25; omitted without a query).
type ScoredSkill struct {
	report.SkillReport
	Score *float64 `json:"score,omitempty"`
}

// searchRequest is a parsed search query; ok is false without one (the
// plain /skills answer).
type searchRequest struct {
	ok       bool
	q        string
	eligible *bool
	limit    int
}

// parseSearch reads eligible, q and limit; an error names the parameter.
func parseSearch(r *http.Request) (searchRequest, string) {
	var sr searchRequest
	if r.URL.RawQuery == "" {
		return sr, ""
	}
	qv := r.URL.Query()
	if e, ok := qv["eligible"]; ok {
		b, err := strconv.ParseBool(e[0])
		if err != nil {
			return sr, "eligible: must be true or false"
		}
		sr.eligible, sr.ok = &b, true
	}
	if q, ok := qv["q"]; ok && q[0] != "" {
		if len(q[0]) > MaxQueryBytes || len(search.Terms(q[0])) > MaxQueryTerms {
			return sr, "q: at most " + strconv.Itoa(MaxQueryBytes) + " bytes and " + strconv.Itoa(MaxQueryTerms) + " words"
		}
		sr.q, sr.ok = q[0], true
		sr.limit = DefaultSearchLimit
	}
	if l, ok := qv["limit"]; ok {
		n, err := strconv.Atoi(l[0])
		if err != nil || n < 1 || n > MaxSearchLimit {
			return sr, "limit: must be a whole number from 1 to " + strconv.Itoa(MaxSearchLimit)
		}
		sr.limit, sr.ok = n, true
	}
	return sr, ""
}

// searchSkills answers a search: the agent's view filtered by verdict,
// ranked by BM25 of q over name and description (ties in listing order),
// cut to limit, each evaluated like a /skills skill object.
func (s *Server) searchSkills(agentID string, sr searchRequest) SearchAnswer {
	s.mu.RLock()
	snap := s.snap
	skills, prepared, offers := s.offersLocked(agentID)
	var cand []int
	for i := range skills {
		if prepared[i].OutOfScope() {
			// Not a candidate, and not in the ranking's statistics
			// either: its words must not move the others' scores (T6).
			continue
		}
		if sr.eligible == nil || offers.Offered[i] == *sr.eligible {
			cand = append(cand, i)
		}
	}
	index := s.cloneIndexLocked()
	s.mu.RUnlock()

	var scores []float64
	if sr.q != "" {
		docs := make([]search.Doc, len(cand))
		for j, i := range cand {
			docs[j] = search.Doc{Name: skills[i].Name, Description: skills[i].Description}
		}
		scores = search.Scores(sr.q, docs)
		byScore := make([]int, 0, len(cand))
		for j := range cand {
			if scores[j] > 0 {
				byScore = append(byScore, j)
			}
		}
		slices.SortStableFunc(byScore, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		ranked := make([]int, len(byScore))
		rankedScores := make([]float64, len(byScore))
		for k, j := range byScore {
			ranked[k], rankedScores[k] = cand[j], scores[j]
		}
		cand, scores = ranked, rankedScores
	}
	if sr.limit > 0 && len(cand) > sr.limit {
		cand = cand[:sr.limit]
	}
	reps := report.Reports(&report.View{Skills: skills, Prepare: func(i int) *eligibility.Prepared { return prepared[i] },
		Offers: offers, Shadowed: func(i int) *skill.Skill { return snap.shadowed(skills[i]) }}, index, cand)
	ans := SearchAnswer{Agent: agentID, Query: sr.q, Skills: make([]ScoredSkill, len(reps))}
	for k := range reps {
		ans.Skills[k].SkillReport = reps[k]
		if scores != nil {
			ans.Skills[k].Score = &scores[k]
		}
	}
	return ans
}
