package gateway

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/console"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/textsafe"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/skill"
)

// MaxReadPathLen is the longest path GET /v1/agents/{id}/read accepts.
const MaxReadPathLen = 1024

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/nodes/connect", s.handleNodeConnect)
	mux.Handle("GET /v1/agents/{agentId}/prompt", s.agentAuth(s.needSnapshot(s.handlePrompt)))
	mux.Handle("GET /v1/agents/{agentId}/skills", s.agentAuth(s.needSnapshot(s.handleSkills)))
	mux.Handle("GET /v1/agents/{agentId}/read", s.agentAuth(s.needSnapshot(s.handleRead)))
	mux.Handle("GET /v1/nodes", s.adminAuth(s.handleNodes))
	mux.Handle("GET /v1/governance", s.adminAuth(s.needSnapshot(s.handleGovernance)))
	mux.Handle("GET /v1/governance/events", s.adminAuth(s.handleGovernanceEvents))
	mux.Handle("/mcp", s.mcpEndpoint()) // MCP over Streamable HTTP (mcp.go)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.Handle("GET "+console.Prefix, console.Handler()) // the web console: public files; its data comes from /v1 with the operator's token
	mux.Handle("GET /ui", http.RedirectHandler(console.Prefix, http.StatusMovedPermanently))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	emptyID := s.agentAuth(func(http.ResponseWriter, *http.Request) {}) // answers 400 "agent id is empty"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every request, node connections included, is counted: Close
		// returns only once all have ended.
		if !s.life.enter() {
			writeError(w, http.StatusServiceUnavailable, "gateway shutting down")
			return
		}
		defer s.life.leave()
		if !s.hostAllowed(r) {
			writeError(w, http.StatusForbidden, "Host "+strconv.Quote(r.Host)+" not accepted: without tokens the gateway answers only loopback names (localhost, 127.0.0.1, [::1]); set SKILLGATE_AGENT_TOKEN and SKILLGATE_NODE_TOKEN to reach it by another name")
			return
		}
		// ServeMux would redirect /v1/agents//prompt to a cleaned path; an
		// empty agent id is a malformed one: 400.
		if strings.HasPrefix(r.URL.Path, "/v1/agents//") {
			emptyID.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// hostAllowed guards a gateway without tokens against DNS rebinding: a
// web page whose name was rebound to 127.0.0.1 sends its own name as Host,
// so without a token to stop it, only loopback Host values are answered
// (on a loopback listener), or IP literals and localhost (on a listener
// opened with --insecure, where the operator chose to be reachable by
// address). The open probes are guarded too: they are read by the same
// pages. With the token of a path configured, any Host is fine.
func (s *Server) hostAllowed(r *http.Request) bool {
	a := s.auth.Load()
	authed := a.agentAuthed()
	if r.URL.Path == "/v1/nodes/connect" {
		authed = a.nodes
	}
	if authed {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host) // no allocation: this runs on every request
	return err == nil && (ip.IsLoopback() || s.exposed.Load())
}

// agentAuth checks the bearer token of an agent's endpoints: the admin
// token (SKILLGATE_AGENT_TOKEN) or the agent's own token
// (gateway.agentTokens) when any token is configured (401 without one, 403
// with one that is not valid here), and validates {agentId} before
// anything else sees it.
func (s *Server) agentAuth(h http.HandlerFunc) http.Handler { return s.bearerAuth(h, false) }

// adminAuth is agentAuth for the endpoints about every agent (/v1/nodes,
// /v1/governance): only the admin token opens them.
func (s *Server) adminAuth(h http.HandlerFunc) http.Handler { return s.bearerAuth(h, true) }

func (s *Server) bearerAuth(h http.HandlerFunc, adminOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("agentId")
		if a := s.auth.Load(); a.agentAuthed() {
			got, ok := bearerToken(r)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="skillgate"`)
				writeError(w, http.StatusUnauthorized, "missing bearer token: send Authorization: Bearer $SKILLGATE_AGENT_TOKEN (or the agent's own token)")
				return
			}
			if !a.admits(got, id, adminOnly) {
				writeError(w, http.StatusForbidden, "forbidden")
				return
			}
		}
		if id != "" || strings.HasPrefix(r.URL.Path, "/v1/agents/") {
			if err := skill.ValidateID(id); err != nil {
				writeError(w, http.StatusBadRequest, "agent id "+err.Error())
				return
			}
		}
		h(w, r)
	})
}

// bearerToken returns the request's bearer token (the scheme's case does
// not matter), and false without one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	return tok, strings.EqualFold(scheme, "Bearer") && tok != ""
}

// authState is what bearerAuth checks tokens against, swapped whole when
// the config changes, so that requests read it without a lock.
type authState struct {
	admin  string            // SKILLGATE_AGENT_TOKEN; "" for none
	agents map[string]string // gateway.agentTokens
	nodes  bool              // a node token is configured
}

// agentAuthed reports whether the agent endpoints need a token.
func (a *authState) agentAuthed() bool { return a.admin != "" || len(a.agents) > 0 }

// admits reports whether token opens an endpoint of agent id (id "" for
// those about every agent; adminOnly for those).
func (a *authState) admits(token, id string, adminOnly bool) bool {
	if a.admin != "" && tokenMatches(token, a.admin) {
		return true
	}
	if want, ok := a.agents[id]; ok && id != "" && !adminOnly {
		return tokenMatches(token, want)
	}
	return false
}

// needSnapshot guards the endpoints that answer from the skills snapshot:
// until a first one is loaded they answer 503 {"error": "store not
// loaded: CAUSE"}, never the empty block (or empty lists) of a store
// that was never read, which an agent would paste as "no skills".
// Retry-After is the poll interval: the next attempt.
func (s *Server) needSnapshot(h http.HandlerFunc) http.HandlerFunc {
	retry := strconv.Itoa(int(math.Ceil(s.cfg.Poll.Seconds())))
	return func(w http.ResponseWriter, r *http.Request) {
		if msg := s.notLoaded.Load(); msg != nil {
			w.Header().Set("Retry-After", retry)
			w.Header().Set("Cache-Control", "no-store")
			writeError(w, http.StatusServiceUnavailable, *msg)
			return
		}
		h(w, r)
	}
}

func (s *Server) handlePrompt(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agentId")
	var (
		wait time.Duration
		b    promptbuild.Budget // lowered by the request; 0: the configured one
	)
	if r.URL.RawQuery != "" { // the common request has none: no map to parse
		q := r.URL.Query()
		var ok bool
		if wait, ok = parseWait(q.Get("wait")); !ok {
			writeError(w, http.StatusBadRequest, "wait: "+strconv.Quote(q.Get("wait"))+" is not a duration such as 30s (at most "+MaxWait.String()+")")
			return
		}
		for _, p := range []struct {
			name string
			dst  *int
		}{{"maxChars", &b.MaxChars}, {"maxSkills", &b.MaxSkills}} {
			if vs, ok := q[p.name]; ok {
				n, err := strconv.Atoi(vs[0])
				if err != nil || n < 1 {
					writeError(w, http.StatusBadRequest, p.name+": "+strconv.Quote(vs[0])+" is not a positive whole number (a request may only lower the configured budget)")
					return
				}
				*p.dst = n
			}
		}
	}
	v := s.promptView(agentID).block(b)
	inm := r.Header.Get("If-None-Match")
	if inm != "" && wait > 0 && etagListMatches(inm, v.etag) {
		release, ok := s.acquireLongPoll(w, r)
		if !ok {
			return
		}
		if r.ProtoMajor == 1 && r.Method == http.MethodGet && s.park(w, r, agentID, b, v.etag, wait, release) {
			return // parked: the connection is the feed's now
		}
		defer release()
		// Long poll in the handler (HTTP/2): the connection may stay open
		// past the write timeout.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(wait + s.cfg.WriteTimeout))
		nv := s.waitForChange(r.Context(), agentID, b, v.etag, wait)
		if nv == nil && r.Context().Err() != nil {
			return // the client left
		}
		if nv != nil {
			v = nv
		}
	}
	h := w.Header()
	h.Set("ETag", v.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	if inm != "" && etagListMatches(inm, v.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	if len(v.prompt) >= gzipMinSize && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		w.Write(v.gzip())
		return
	}
	io.WriteString(w, v.prompt) // no copy of a block that may be hundreds of KiB
}

// waitForChange waits until the agent's block is no longer the one of
// etag and returns it, or returns nil when wait ends or ctx does (the
// client left: nothing of it stays behind).
func (s *Server) waitForChange(ctx context.Context, agentID string, b promptbuild.Budget, etag string, wait time.Duration) *agentBlock {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		all, view := s.feed.subscribe(viewKey(s.now.Load(), agentID))
		if v := s.promptView(agentID).block(b); v.etag != etag {
			return v
		}
		select {
		case <-all:
		case <-view:
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// gzipMinSize is the block size from which a gzip answer is worth it.
const gzipMinSize = 4 << 10

// acceptsGzip reports whether an Accept-Encoding value allows gzip (not
// "gzip;q=0").
func acceptsGzip(ae string) bool {
	for part := range strings.SplitSeq(ae, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(params, " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

func (s *Server) handleSkills(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agentId")
	sr, bad := parseSearch(r)
	switch {
	case bad != "":
		writeError(w, http.StatusBadRequest, bad)
	case sr.ok:
		select {
		case s.searches <- struct{}{}:
		case <-time.After(searchWait):
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusTooManyRequests, "too many searches in flight; retry in a second")
			return
		case <-r.Context().Done():
			return
		}
		defer func() { <-s.searches }()
		writeJSON(w, http.StatusOK, s.searchSkills(agentID, sr))
	default:
		w.Header().Set("Content-Type", "application/json")
		writeSkillsAnswer(w, agentID, s.skillsAnswer(agentID))
	}
}

func (s *Server) handleNodes(w http.ResponseWriter, r *http.Request) {
	q, err := parseNodesQuery(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	body := nodesPage(s.nodeEntries(), q)
	w.Header().Set("Content-Type", "application/json")
	if len(body) >= gzipMinSize && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Vary", "Accept-Encoding")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		zw.Write(body)
		zw.Close()
		return
	}
	w.Write(body)
}

// handleRead serves a file of a skill's directory in the agent's view:
// agent-local when the agent has that skill directory, else global. It
// answers from the snapshot, never from the store: the bytes served are
// the bytes the poller read and governance scanned (a rewrite in the store
// is served once a poll has read and scanned it), and a file the scanner
// did not read is not served at all.
func (s *Server) handleRead(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("agentId")
	p := r.URL.Query().Get("path")
	dir, rest, err := checkReadPath(p)
	if err != nil {
		writeError(w, http.StatusBadRequest, "path: "+err.Error())
		return
	}
	s.mu.RLock()
	sk, ok := s.snap.findDir(agentID, dir)
	ok = ok && s.pol.cfg.InScope(agentID, sk) // outside the scope: as if it did not exist
	var held string                           // why governance keeps the skill out, if it does
	if p := s.prepared[sk]; ok && p != nil && p.Stage == eligibility.StageGovernance {
		held = p.Reason
	}
	in := s.snap.inputs[sk]
	s.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, "no skill directory "+dir+" in the view of agent "+agentID)
		return
	}
	if held != "" {
		// A held skill's files are what governance keeps from agents.
		writeError(w, http.StatusForbidden, "skill directory "+dir+" is "+held+"; see GET /v1/governance")
		return
	}
	body, code, msg := readScanned(in, p, rest)
	if code != http.StatusOK {
		writeError(w, code, msg)
		return
	}
	w.Header().Set("Content-Type", readContentType(rest, body))
	setInert(w.Header())
	w.Write(body)
}

// readContentType is the Content-Type of a skill file: by its extension,
// else sniffed; a type a browser would run as a document (HTML, XHTML,
// SVG, XML that may carry a stylesheet) is served as plain text. A skill's
// files are the skill author's, and the gateway's origin holds the
// console and the API.
func readContentType(name string, body []byte) string {
	ct := mime.TypeByExtension(path.Ext(name))
	if strings.HasSuffix(name, ".md") {
		ct = "text/markdown; charset=utf-8"
	}
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	media, _, _ := strings.Cut(ct, ";")
	media = strings.ToLower(strings.TrimSpace(media))
	if media == "text/html" || strings.HasSuffix(media, "xml") || strings.Contains(media, "+xml") || media == "text/xsl" {
		return "text/plain; charset=utf-8"
	}
	return ct
}

// setInert makes an answer inert in a browser, whatever its type: no
// script, no subresource, no embedding by another origin (C3).
func setInert(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// checkReadPath accepts only skills/{dir}/{rest…}: relative, no "..", no
// backslash, no control characters, at most MaxReadPathLen bytes.
func checkReadPath(p string) (dir, rest string, err error) {
	switch {
	case p == "":
		return "", "", errors.New("missing; expected ?path=skills/{dir}/FILE")
	case len(p) > MaxReadPathLen:
		return "", "", errors.New("longer than 1024 bytes")
	case strings.HasPrefix(p, "/"):
		return "", "", errors.New("must be relative, like skills/{dir}/SKILL.md")
	case strings.Contains(p, `\`):
		return "", "", errors.New("contains a backslash")
	}
	for _, r := range p {
		switch {
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			return "", "", errors.New("contains a control character")
		case textsafe.IsInvisible(r):
			return "", "", fmt.Errorf("contains the invisible character %U", r)
		}
	}
	parts := strings.Split(p, "/")
	if len(parts) < 3 || parts[0] != "skills" {
		return "", "", errors.New("must look like skills/{dir}/FILE")
	}
	for _, part := range parts[1:] {
		if part == "" || part == "." || part == ".." {
			return "", "", errors.New("has an empty, \".\" or \"..\" segment")
		}
	}
	if err := skill.ValidateID(parts[1]); err != nil {
		return "", "", errors.New("skill directory " + err.Error())
	}
	return parts[1], strings.Join(parts[2:], "/"), nil
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	s.mu.RLock()
	loaded := !s.health.lastOK.IsZero()
	j := api.Ready{Ready: true, Store: publicStoreName(s.cfg.StoreName), Loaded: &loaded,
		SnapshotAgeSec: s.snapshotAgeLocked(now).Seconds(), Nodes: s.nodeCountLocked()}
	// The probe is open: it says what is wrong (Problem.Cause), not where
	// (endpoints, paths and OS error text go to the log and to the agent
	// endpoints, which need a token).
	switch p := s.health.problem; {
	case !loaded && s.health.lastErr == nil:
		j.Ready, j.Error, j.Hint = false, notLoadedYet, "wait for the first load of the store to end"
	case !loaded:
		j.Ready, j.Error, j.Hint = false, "store not loaded: "+p.Cause, p.Hint
	case s.health.lastErr != nil:
		j.Ready, j.Error, j.Hint = false, "storage failing, serving the last good snapshot: "+p.Cause, p.Hint
	}
	if s.member != nil {
		remote := s.remoteCountLocked()
		j.RemoteNodes = &remote
	}
	s.mu.RUnlock()
	if s.member != nil {
		if st := s.member.State(); st.Connected {
			j.Cluster = "ok"
		} else {
			j.Ready, j.Cluster = false, st.Reason
		}
	}
	code := http.StatusOK
	if !j.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, j)
}

// publicStoreName is how the open /readyz names the store: the bucket of
// an s3:// URL (not its endpoint, which names the account), or
// "directory": never a filesystem path.
func publicStoreName(name string) string {
	if rest, ok := strings.CutPrefix(name, "s3://"); ok {
		bucket, _, _ := strings.Cut(rest, "?")
		return "s3://" + bucket
	}
	return "directory"
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, api.Error{Error: msg})
}
