// Package search ranks skills by the relevance of a query to their name
// and description, with Okapi BM25: the "find a skill" tool of an agent
// framework, for the skills that did not fit the prompt budget. It is pure
// and small enough not to need a library: the documents are a few
// thousand short texts, ranked per request.
package search

import (
	"math"
	"strings"
	"unicode"
)

// BM25 parameters (the usual ones), and the weight of a name's terms: a
// word of the name says more about a skill than one of its description.
const (
	k1         = 1.2
	b          = 0.75
	nameWeight = 3
)

// Doc is one skill's searchable text.
type Doc struct {
	Name, Description string
}

// Terms splits text into lowercase words of letters and digits; "-", "_"
// and "." join nothing, so "github-admin" is "github" and "admin".
func Terms(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Scores returns the BM25 score of each doc for the query (0 for a doc
// that matches no query term). A name's terms count nameWeight times.
func Scores(query string, docs []Doc) []float64 {
	q := uniq(Terms(query))
	scores := make([]float64, len(docs))
	if len(q) == 0 || len(docs) == 0 {
		return scores
	}
	tf := make([]map[string]float64, len(docs))
	lens := make([]float64, len(docs))
	df := make(map[string]int, len(q))
	total := 0.0
	for i, d := range docs {
		m := map[string]float64{}
		add := func(text string, w float64) {
			for _, t := range Terms(text) {
				lens[i] += w
				for _, qt := range q {
					if t == qt {
						m[t] += w
					}
				}
			}
		}
		add(d.Name, nameWeight)
		add(d.Description, 1)
		for t := range m {
			df[t]++
		}
		tf[i] = m
		total += lens[i]
	}
	avg := total / float64(len(docs))
	if avg == 0 {
		avg = 1
	}
	n := float64(len(docs))
	for i := range docs {
		for _, t := range q {
			f := tf[i][t]
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			scores[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*lens[i]/avg))
		}
	}
	return scores
}

func uniq(terms []string) []string {
	var out []string
	for _, t := range terms {
		dup := false
		for _, o := range out {
			dup = dup || o == t
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}
