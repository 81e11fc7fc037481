// Package mcp serves an agent's skills over the Model Context Protocol:
// the tools list_skills, search_skills, load_skill and read_skill_file,
// each eligible skill's SKILL.md as a resource skill://{agentId}/{read_path},
// the prompt available_skills, and notifications/resources/list_changed when
// the agent's resource list changes.
//
// It decides nothing about skills: every answer comes from a Backend, which
// the gateway implements over its live state (gateway/mcp.go) and Remote
// implements over another gateway's /mcp (the stdio proxy of `skillgate
// mcp`). It never imports the gateway. The protocol is the official Go SDK's
// (github.com/modelcontextprotocol/go-sdk): Handler serves its Streamable
// HTTP transport with the sessions bounded in number and idle time, and
// ServeStdio its stdio transport.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Backend is where the tools, resources and prompt get their answers, for
// one agent at a time. Only eligible skills exist for it: a skill that is
// held by governance, outside the agent's scope, ineligible or unknown is
// ErrNotAvailable, whichever the reason.
type Backend interface {
	// Skills returns the agent's eligible skills in the order of its
	// <available_skills> block, with no budget applied. With hosts, each
	// skill with host requirements carries its Hosts.
	Skills(ctx context.Context, agentID string, hosts bool) ([]Skill, error)
	// Search ranks the agent's eligible skills by query as GET
	// /v1/agents/{id}/skills?eligible=true&q=…&limit=… does, each with its
	// Score; at most limit of them.
	Search(ctx context.Context, agentID, query string, limit int) ([]Skill, error)
	// ReadFile returns a file of the eligible skill that name designates
	// (its name, else its directory, else its location, as skills.entries
	// keys are matched); path is relative to the skill's directory
	// ("SKILL.md", "scripts/run.sh"). The bytes are those GET
	// /v1/agents/{id}/read serves for the file's read path.
	ReadFile(ctx context.Context, agentID, name, path string) (File, error)
	// ReadPath returns the file at a read path (skills/{dir}/…) of an
	// eligible skill of the agent, as GET /v1/agents/{id}/read serves it.
	ReadPath(ctx context.Context, agentID, readPath string) (File, error)
	// Prompt returns the agent's budgeted <available_skills> block ("" when
	// no skill is eligible).
	Prompt(ctx context.Context, agentID string) (string, error)
	// Subscribe returns a wait that returns once anything the agent's
	// answers derive from may have changed after Subscribe was called (nil),
	// or when ctx ends (its error). Subscribe before looking, so that no
	// change between the look and the wait is missed.
	Subscribe(agentID string) (wait func(context.Context) error)
}

// ErrNotAvailable is the Backend's answer for a skill the agent may not
// use: held, out of scope, ineligible or unknown. The tools answer it with
// NotAvailable's text, which does not say which.
var ErrNotAvailable = errors.New("skill not available")

// NotAvailable is the one error text of a skill the agent may not use.
func NotAvailable(name, agentID string) string {
	return "skill " + name + " is not available to agent " + agentID
}

// Skill is one of an agent's eligible skills.
type Skill struct {
	Name        string
	Description string
	ReadPath    string // skills/{dir}/SKILL.md, the path GET …/read takes
	Location    string // the storage key
	Version     string // the skill's version as written; "" when none
	Hosts       *Hosts // skills with host requirements, when asked for
	Score       float64
}

// Hosts are the connected hosts a skill with host requirements can run on.
type Hosts struct {
	Count int      `json:"count" jsonschema:"how many connected hosts satisfy every host requirement of the skill"`
	IDs   []string `json:"ids" jsonschema:"the first of them (at most 5) in id order"`
}

// MaxHostIDs is how many host ids a skill's Hosts lists.
const MaxHostIDs = 5

// File is a file of a skill directory.
type File struct {
	Name     string // the skill's name
	ReadPath string // the file's read path, skills/{dir}/…
	Body     []byte
}

// ResourceURI is the URI of a read path of an agent's skill:
// skill://{agentId}/{read_path}, each part path-escaped (ids and
// directories with nothing to escape are written as they are).
func ResourceURI(agentID, readPath string) string {
	segs := strings.Split(readPath, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "skill://" + url.PathEscape(agentID) + "/" + strings.Join(segs, "/")
}

// ParseResourceURI splits a skill:// URI into its agent id and read path.
func ParseResourceURI(uri string) (agentID, readPath string, err error) {
	rest, ok := strings.CutPrefix(uri, "skill://")
	if !ok {
		return "", "", fmt.Errorf("resource URI %q: expected skill://{agentId}/skills/{dir}/SKILL.md", uri)
	}
	id, p, ok := strings.Cut(rest, "/")
	if !ok || id == "" || p == "" {
		return "", "", fmt.Errorf("resource URI %q: expected skill://{agentId}/skills/{dir}/SKILL.md", uri)
	}
	if agentID, err = url.PathUnescape(id); err != nil {
		return "", "", fmt.Errorf("resource URI %q: %v", uri, err)
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if segs[i], err = url.PathUnescape(s); err != nil {
			return "", "", fmt.Errorf("resource URI %q: %v", uri, err)
		}
	}
	return agentID, strings.Join(segs, "/"), nil
}
