package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/console"
)

func serve(t *testing.T, method, path string, hdr http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	console.Handler().ServeHTTP(rec, req)
	return rec
}

// TestHandler: the page at /ui/, its files with their types, the security
// headers on every answer, ETags, and nothing else.
func TestHandler(t *testing.T) {
	for _, c := range []struct {
		path, ctype, contains string
	}{
		{"/ui/", "text/html; charset=utf-8", `<script src="app.js" defer></script>`},
		{"/ui/index.html", "text/html; charset=utf-8", `<main id="main"`},
		{"/ui/app.js", "text/javascript; charset=utf-8", `"use strict";`},
		{"/ui/app.css", "text/css; charset=utf-8", "prefers-color-scheme: dark"},
		{"/ui/favicon.svg", "image/svg+xml", "<svg"},
	} {
		rec := serve(t, http.MethodGet, c.path, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", c.path, rec.Code, rec.Body)
			continue
		}
		h := rec.Header()
		if got := h.Get("Content-Type"); got != c.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.ctype)
		}
		if !strings.Contains(rec.Body.String(), c.contains) {
			t.Errorf("GET %s: body lacks %q", c.path, c.contains)
		}
		checkSecurityHeaders(t, c.path, h)
		etag := h.Get("ETag")
		if !regexp.MustCompile(`^"[0-9a-f]{32}"$`).MatchString(etag) {
			t.Errorf("GET %s: ETag %q", c.path, etag)
		}
		if got := h.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache", c.path, got)
		}
		rec = serve(t, http.MethodGet, c.path, http.Header{"If-None-Match": {etag}})
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Errorf("GET %s with If-None-Match: %d %q, want 304 without a body", c.path, rec.Code, rec.Body)
		}
	}
	rec := serve(t, http.MethodHead, "/ui/", nil)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD /ui/: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	for _, p := range []string{"/ui/nope.js", "/ui/assets/app.js", "/ui/../console.go", "/other"} {
		rec := serve(t, http.MethodGet, p, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, rec.Code)
		}
		checkSecurityHeaders(t, p, rec.Header())
	}
	rec = serve(t, http.MethodPost, "/ui/", nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /ui/: %d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

func checkSecurityHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "default-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("%s: Content-Security-Policy %q", path, csp)
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q", path, got)
	}
}

// TestAssetsSelfContained: the console loads nothing from elsewhere (no
// CDN, no web font, no external URL) and has no inline script or style
// the Content-Security-Policy would block.
func TestAssetsSelfContained(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	err := filepath.WalkDir("assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		if strings.HasSuffix(p, ".svg") {
			s = strings.Replace(s, `xmlns="http://www.w3.org/2000/svg"`, "", 1) // a namespace name, never fetched
		}
		if m := url.FindString(s); m != "" {
			t.Errorf("%s refers to %q: the console loads nothing from elsewhere", p, m)
		}
		for _, bad := range []string{"@import", "@font-face", "url("} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
		if strings.HasSuffix(p, ".html") {
			if regexp.MustCompile(`<script(\s[^>]*)?>[^<]`).MatchString(s) || !strings.Contains(s, `<script src="app.js" defer></script>`) {
				t.Errorf("%s has an inline script (the CSP blocks it)", p)
			}
			if regexp.MustCompile(`(?i)\s(style|on[a-z]+)=`).MatchString(s) || strings.Contains(s, "<style") {
				t.Errorf("%s has an inline style or event handler attribute (the CSP blocks it)", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoHTMLSinks: API text is hostile; the script never parses text as
// HTML or code.
func TestNoHTMLSinks(t *testing.T) {
	b, err := os.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute(\"style", "DOMParser", "createContextualFragment"} {
		if strings.Contains(string(b), sink) {
			t.Errorf("app.js uses %s", sink)
		}
	}
}
