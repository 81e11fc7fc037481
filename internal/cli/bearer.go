package cli

import "net/http"

// BearerTransport sends Token as a bearer token with every request (none
// when empty), for clients of the gateway's API.
type BearerTransport struct {
	Token string
	Base  http.RoundTripper
}

// RoundTrip adds the Authorization header to a copy of r.
func (t BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.Token == "" {
		return t.Base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.Token)
	return t.Base.RoundTrip(r)
}
