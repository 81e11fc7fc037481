// Package console is the operators' web console of the gateway: plain
// HTML, CSS and JavaScript embedded in the binary and served under
// /ui/ by `skillgate serve`.
//
// The console is a client of the public JSON API and nothing else: it
// reads /v1/agents/{id}/prompt, /skills and /read, /v1/nodes,
// /v1/governance and /readyz with the bearer token the operator pasted,
// so that it can never show more than that token may read. Its own files
// are public (they hold no data) and are served with a Content-Security-
// Policy that allows only same-origin scripts, styles and requests: no
// inline script, no CDN, no web font, no external request. Every text the
// API returns is inserted with textContent, never parsed as HTML.
//
// This package imports nothing of the gateway; the gateway mounts Handler.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path under which Handler serves the console.
const Prefix = "/ui/"

// ContentSecurityPolicy is the policy of every answer of Handler: only
// the console's own origin, never framed.
const ContentSecurityPolicy = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed assets
var assets embed.FS

// file is one embedded asset, ready to serve.
type file struct {
	body  []byte
	ctype string
	etag  string
}

// files maps the path below Prefix ("index.html", "app.js", …) to its asset.
var files = mustLoad()

func mustLoad() map[string]file {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err)
	}
	out := map[string]file{}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		switch path.Ext(p) { // not left to the host's mime tables
		case ".html":
			ct = "text/html; charset=utf-8"
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		sum := sha256.Sum256(b)
		out[p] = file{body: b, ctype: ct, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return out
}

// Handler serves the console's files under Prefix: Prefix itself is the
// page (index.html), the other paths its scripts, styles and icon. It
// needs no token: the files hold no data, and the page asks for a token
// before it reads any. Answers carry the console's Content-Security-Policy,
// nosniff, no-referrer and a strong ETag (Cache-Control: no-cache, so that
// a new binary's files are picked up at once and unchanged ones cost a
// 304).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if name == "" {
			name = "index.html"
		}
		f, ok := files[name]
		if !ok {
			http.Error(w, "no such console file: "+Prefix+name, http.StatusNotFound)
			return
		}
		h.Set("Content-Type", f.ctype)
		h.Set("ETag", f.etag)
		h.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}
