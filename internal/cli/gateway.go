package cli

import (
	"fmt"
	"net/url"
	"strings"
)

// ConnectPath is the gateway's WebSocket endpoint for nodes, under its
// base URL.
const ConnectPath = "/v1/nodes/connect"

// GatewayProblem says what is wrong with a gateway URL.
type GatewayProblem int

// The problems ParseGateway reports.
const (
	NoScheme    GatewayProblem = iota + 1 // no "scheme://"
	NotURL                                // url.Parse refused it
	BadScheme                             // not http, https, ws or wss
	NoHost                                // nothing after "scheme://"
	Credentials                           // user or password in the URL
)

// GatewayURLError is a value that is not a gateway's base URL. Its
// message is the node agent's wording; a program that words these
// differently switches on Problem.
type GatewayURLError struct {
	URL     string // the value, trimmed of white space
	Problem GatewayProblem
	Scheme  string // the scheme given, for BadScheme
	Err     error  // url.Parse's error, for NotURL
}

func (e *GatewayURLError) Error() string {
	switch e.Problem {
	case NoScheme:
		return fmt.Sprintf("%q: the scheme must be http, https, ws or wss (e.g. http://%s)", e.URL, e.URL)
	case NotURL:
		return fmt.Sprintf("not a URL: %v", e.Err)
	case BadScheme:
		return fmt.Sprintf("%q: the scheme must be http, https, ws or wss", e.URL)
	case NoHost:
		return fmt.Sprintf("%q has no host", e.URL)
	case Credentials:
		// A password in the URL would show in ps and in logs.
		return "credentials in the URL are not supported; put the token in " + NodeTokenEnv + " or --token-file"
	}
	return fmt.Sprintf("%q is not a gateway URL", e.URL)
}

// Unwrap returns url.Parse's error, if any.
func (e *GatewayURLError) Unwrap() error { return e.Err }

// ParseGateway checks a gateway's base URL, as --gateway takes it:
// http://, https://, ws:// or wss://, a host, no credentials. It returns
// the HTTP base every other URL is built on: scheme http (for http and
// ws) or https (for https and wss), the path without trailing slashes.
// Query and fragment are kept for the caller to judge. Errors are
// *GatewayURLError.
func ParseGateway(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		return nil, &GatewayURLError{URL: raw, Problem: NoScheme}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &GatewayURLError{URL: raw, Problem: NotURL, Err: err}
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		u.Scheme = "http"
	case "https", "wss":
		u.Scheme = "https"
	default:
		return nil, &GatewayURLError{URL: raw, Problem: BadScheme, Scheme: u.Scheme}
	}
	if u.Host == "" {
		return nil, &GatewayURLError{URL: raw, Problem: NoHost}
	}
	if u.User != nil {
		return nil, &GatewayURLError{URL: raw, Problem: Credentials}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// ConnectURL returns the WebSocket URL of the node endpoint under an HTTP
// base from ParseGateway: ws for http, wss for https, ConnectPath
// appended to the path; the query is kept, the fragment dropped.
func ConnectURL(base *url.URL) string {
	u := *base
	u.Scheme = "ws"
	if base.Scheme == "https" {
		u.Scheme = "wss"
	}
	u.Path += ConnectPath
	u.RawPath = ""
	u.Fragment = ""
	return u.String()
}
