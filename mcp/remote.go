package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Remote is a Backend that asks a gateway's /mcp endpoint, as an MCP
// client of one agent: the backend of the stdio proxy (`skillgate mcp`).
// A session the gateway ended (a restart, its idle timeout) is opened
// again at the next call, and the agent's subscribers are woken then,
// since notifications may have been missed meanwhile.
type Remote struct {
	endpoint string
	client   *http.Client
	agentID  string
	log      *slog.Logger
	opts     RemoteOptions

	mu      sync.Mutex
	cs      *sdk.ClientSession // nil: open one at the next call
	changed chan struct{}      // closed at the next list_changed (or reconnection)
}

// RemoteOptions configure DialRemote.
type RemoteOptions struct {
	// HTTPClient makes the requests; it adds the bearer token (nil:
	// http.DefaultClient).
	HTTPClient *http.Client
	Name       string // the client's name and version in initialize
	Version    string
	Logger     *slog.Logger
}

// DialRemote opens an MCP session with the gateway endpoint (its /mcp URL,
// with ?agent= when the token is the admin's) for agentID.
func DialRemote(ctx context.Context, endpoint, agentID string, opts RemoteOptions) (*Remote, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Name == "" {
		opts.Name = "skillgate-mcp-proxy"
	}
	r := &Remote{endpoint: endpoint, client: opts.HTTPClient, agentID: agentID, log: opts.Logger, opts: opts, changed: make(chan struct{})}
	cs, err := r.dial(ctx)
	if err != nil {
		return nil, err
	}
	r.cs = cs
	return r, nil
}

func (r *Remote) dial(ctx context.Context) (*sdk.ClientSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: r.opts.Name, Version: r.opts.Version}, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { r.wake() },
		Logger:                     r.opts.Logger,
	})
	return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: r.endpoint, HTTPClient: r.client}, nil)
}

// wake wakes every Subscribe wait.
func (r *Remote) wake() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Close ends the session with the gateway.
func (r *Remote) Close() error {
	r.mu.Lock()
	cs := r.cs
	r.cs = nil
	r.mu.Unlock()
	if cs != nil {
		return cs.Close()
	}
	return nil
}

// session returns the open session, opening one if the last one ended.
func (r *Remote) session(ctx context.Context) (*sdk.ClientSession, error) {
	r.mu.Lock()
	cs := r.cs
	r.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	cs, err := r.dial(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.cs != nil {
		r.mu.Unlock()
		cs.Close()
		return r.session(ctx)
	}
	r.cs = cs
	r.mu.Unlock()
	r.log.Info("mcp: session with the gateway opened again", "endpoint", r.endpoint)
	r.wake() // what changed meanwhile was not notified
	return cs, nil
}

// lost drops cs after a call failed because its session ended.
func (r *Remote) lost(cs *sdk.ClientSession) {
	r.mu.Lock()
	if r.cs == cs {
		r.cs = nil
	}
	r.mu.Unlock()
	cs.Close()
}

// sessionGone reports whether err says the gateway no longer has the session.
func sessionGone(err error) bool {
	return errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, sdk.ErrConnectionClosed)
}

// do runs f on the session, once more on a new session when the gateway
// ended the old one.
func (r *Remote) do(ctx context.Context, f func(*sdk.ClientSession) error) error {
	for attempt := 0; ; attempt++ {
		cs, err := r.session(ctx)
		if err != nil {
			return fmt.Errorf("gateway %s: %w", r.endpoint, err)
		}
		err = f(cs)
		if err == nil || attempt > 0 || !sessionGone(err) {
			return err
		}
		r.lost(cs)
	}
}

// call calls a tool of the gateway and decodes its structured result into
// out; a tool error is returned with the gateway's text.
func (r *Remote) call(ctx context.Context, tool string, args, out any) error {
	return r.do(ctx, func(cs *sdk.ClientSession) error {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			var texts []string
			for _, c := range res.Content {
				if t, ok := c.(*sdk.TextContent); ok {
					texts = append(texts, t.Text)
				}
			}
			return errors.New(strings.Join(texts, "\n"))
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("gateway's %s answer: %w", tool, err)
		}
		return nil
	})
}

// Skills implements Backend.
func (r *Remote) Skills(ctx context.Context, agentID string, hosts bool) ([]Skill, error) {
	var out ListResult
	if err := r.call(ctx, ToolListSkills, map[string]any{}, &out); err != nil {
		return nil, err
	}
	skills := make([]Skill, len(out.Skills))
	for i, s := range out.Skills {
		skills[i] = Skill{Name: s.Name, Description: s.Description, ReadPath: s.ReadPath, Location: s.Location}
		if hosts {
			skills[i].Hosts = s.Hosts
		}
	}
	return skills, nil
}

// Search implements Backend.
func (r *Remote) Search(ctx context.Context, agentID, query string, limit int) ([]Skill, error) {
	var out SearchResult
	if err := r.call(ctx, ToolSearchSkills, map[string]any{"query": query, "limit": limit}, &out); err != nil {
		return nil, err
	}
	skills := make([]Skill, len(out.Skills))
	for i, s := range out.Skills {
		skills[i] = Skill(s)
	}
	return skills, nil
}

// ReadFile implements Backend. The gateway's error texts (a skill not
// available among them) come back as they are.
func (r *Remote) ReadFile(ctx context.Context, agentID, name, path string) (File, error) {
	var out FileResult
	var err error
	if path == "SKILL.md" {
		err = r.call(ctx, ToolLoadSkill, map[string]any{"name": name}, &out)
	} else {
		err = r.call(ctx, ToolReadSkillFile, map[string]any{"name": name, "path": path}, &out)
	}
	if err != nil {
		if err.Error() == NotAvailable(name, agentID) {
			return File{}, ErrNotAvailable
		}
		return File{}, err
	}
	return File{Name: out.Name, ReadPath: out.ReadPath, Body: []byte(out.Text)}, nil
}

// ReadPath implements Backend.
func (r *Remote) ReadPath(ctx context.Context, agentID, readPath string) (File, error) {
	var f File
	err := r.do(ctx, func(cs *sdk.ClientSession) error {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: ResourceURI(agentID, readPath)})
		if err != nil {
			return err
		}
		if len(res.Contents) == 0 {
			return fmt.Errorf("gateway answered no content for %s", readPath)
		}
		c := res.Contents[0]
		f = File{ReadPath: readPath, Body: []byte(c.Text)}
		if c.Blob != nil {
			f.Body = c.Blob
		}
		return nil
	})
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return File{}, &jsonrpc.Error{Code: werr.Code, Message: werr.Message}
	}
	return f, err
}

// Prompt implements Backend.
func (r *Remote) Prompt(ctx context.Context, agentID string) (string, error) {
	var text string
	err := r.do(ctx, func(cs *sdk.ClientSession) error {
		res, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: PromptName})
		if err != nil {
			return err
		}
		for _, m := range res.Messages {
			if t, ok := m.Content.(*sdk.TextContent); ok {
				text += t.Text
			}
		}
		return nil
	})
	return text, err
}

// Subscribe implements Backend: the wait ends at the gateway's next
// list_changed, or when the session with it was opened again.
func (r *Remote) Subscribe(agentID string) func(context.Context) error {
	r.mu.Lock()
	ch := r.changed
	r.mu.Unlock()
	return func(ctx context.Context) error {
		select {
		case <-ch:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Watch re-opens the session when the gateway ends it (the idle timeout,
// a restart), retrying every interval, until ctx ends: notifications keep
// coming to a proxy nobody calls.
func (r *Remote) Watch(ctx context.Context, retry time.Duration) {
	for {
		r.mu.Lock()
		cs := r.cs
		r.mu.Unlock()
		if cs != nil {
			done := make(chan struct{})
			go func() { cs.Wait(); close(done) }()
			select {
			case <-ctx.Done():
				return
			case <-done:
				r.lost(cs)
			}
		}
		if _, err := r.session(ctx); err != nil {
			r.log.Warn("mcp: the gateway's session ended; opening another failed", "endpoint", r.endpoint, "err", err, "retry_in", retry.String())
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
		}
	}
}
