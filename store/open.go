package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Open returns the store a --store value names:
//
//	DIR or file:///abs/dir                  a local directory (Dir)
//	s3://BUCKET?endpoint=URL&region=R&path_style=true|false
//	                                        an S3-compatible bucket (S3)
//
// For s3 URLs every query parameter is optional; path_style defaults to
// true when an endpoint is given (MinIO needs it, R2 accepts it) and false
// otherwise. Credentials never go in the URL: they come from the standard
// AWS chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, …).
func Open(ctx context.Context, storeURL string) (Store, error) {
	return OpenWithLogger(ctx, storeURL, nil)
}

// OpenWithLogger is Open with the logger that receives the AWS SDK's own
// log lines (nil: slog.Default()). The gateway passes its JSON logger:
// the SDK would otherwise write plain-text lines to stderr, into the
// middle of a JSON log.
func OpenWithLogger(ctx context.Context, storeURL string, log *slog.Logger) (Store, error) {
	if storeURL == "" {
		return nil, errors.New("store is empty: expected a directory or s3://BUCKET?endpoint=…")
	}
	scheme, _, hasScheme := strings.Cut(storeURL, "://")
	if !hasScheme {
		return NewDir(storeURL)
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(storeURL)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		return openFileURL(storeURL, u)
	case "s3":
		cfg, err := ParseS3URL(storeURL)
		if err != nil {
			return nil, err
		}
		cfg.Logger = log
		return NewS3(ctx, cfg)
	}
	return nil, fmt.Errorf("store %q: unsupported scheme %q: expected a directory, file:///DIR or s3://BUCKET?endpoint=…", Redact(storeURL), scheme)
}

func openFileURL(storeURL string, u *url.URL) (Store, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("store %q: file URL host %q: expected file:///ABSOLUTE/PATH (no host)", Redact(storeURL), u.Host)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("store %q: a file URL takes no query or fragment", Redact(storeURL))
	}
	if u.Path == "" {
		return nil, fmt.Errorf("store %q: file URL has no path: expected file:///ABSOLUTE/PATH", Redact(storeURL))
	}
	return NewDir(u.Path)
}

// s3Params lists the query parameters an s3:// store URL accepts.
const s3Params = "endpoint, path_style, region"

func isS3Param(name string) bool {
	switch name {
	case "endpoint", "path_style", "region":
		return true
	}
	return false
}

// ParseS3URL parses s3://BUCKET?endpoint=…&region=…&path_style=true|false
// into an S3Config (without credentials). Errors name the part of the URL
// that is wrong and what is expected.
func ParseS3URL(storeURL string) (S3Config, error) {
	u, err := url.Parse(storeURL)
	if err != nil {
		return S3Config{}, fmt.Errorf("store: %w", err)
	}
	if !strings.EqualFold(u.Scheme, "s3") {
		return S3Config{}, fmt.Errorf("store %q: expected an s3://BUCKET URL", Redact(storeURL))
	}
	if u.User != nil {
		return S3Config{}, fmt.Errorf("store %q: credentials do not go in the store URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)", Redact(storeURL))
	}
	if u.Host == "" {
		return S3Config{}, fmt.Errorf("store %q: missing bucket: expected s3://BUCKET?endpoint=…", Redact(storeURL))
	}
	if u.Port() != "" {
		return S3Config{}, fmt.Errorf("store %q: bucket %q has a port: the service address goes in endpoint=, e.g. s3://BUCKET?endpoint=http://127.0.0.1:9000", Redact(storeURL), u.Host)
	}
	if u.Path != "" && u.Path != "/" {
		return S3Config{}, fmt.Errorf("store %q: path %q after the bucket is not supported: expected s3://BUCKET?endpoint=… (skills live at the bucket's root)", Redact(storeURL), u.Path)
	}
	if u.Fragment != "" {
		return S3Config{}, fmt.Errorf("store %q: unexpected fragment %q", Redact(storeURL), "#"+u.Fragment)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return S3Config{}, fmt.Errorf("store %q: query: %w", Redact(storeURL), err)
	}
	var unknown []string
	for k, v := range q {
		if !isS3Param(k) {
			unknown = append(unknown, k)
		} else if len(v) > 1 {
			return S3Config{}, fmt.Errorf("store %q: parameter %s is given %d times", Redact(storeURL), k, len(v))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return S3Config{}, fmt.Errorf("store %q: unknown parameter(s) %s: expected %s", Redact(storeURL), strings.Join(unknown, ", "), s3Params)
	}

	cfg := S3Config{Bucket: u.Host, Endpoint: q.Get("endpoint"), Region: q.Get("region")}
	if q.Has("endpoint") {
		if err := checkEndpoint(cfg.Endpoint); err != nil {
			return S3Config{}, fmt.Errorf("store %q: %w", Redact(storeURL), err)
		}
	}
	if q.Has("region") && cfg.Region == "" {
		return S3Config{}, fmt.Errorf("store %q: region is empty: give a region (\"auto\" for R2) or leave the parameter out", Redact(storeURL))
	}
	cfg.PathStyle = cfg.Endpoint != ""
	if q.Has("path_style") {
		v, err := strconv.ParseBool(q.Get("path_style"))
		if err != nil {
			return S3Config{}, fmt.Errorf("store %q: path_style %q: expected true or false", Redact(storeURL), q.Get("path_style"))
		}
		cfg.PathStyle = v
	}
	return cfg, nil
}

// Redact returns a store URL fit for logs and status pages: user
// information (which Open refuses anyway), also inside the endpoint
// parameter, is replaced by "REDACTED".
// Directories and URLs without user information come back unchanged.
func Redact(storeURL string) string {
	if !strings.Contains(storeURL, "://") || !strings.Contains(storeURL, "@") {
		return storeURL
	}
	u, err := url.Parse(storeURL)
	if err != nil {
		return "(a store URL that does not parse)"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	// The endpoint parameter is a URL of its own and may carry some too.
	if q := u.Query(); q.Has("endpoint") {
		q.Set("endpoint", Redact(q.Get("endpoint")))
		u.RawQuery = q.Encode()
	}
	return u.String()
}
