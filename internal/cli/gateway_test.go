package cli

import (
	"errors"
	"testing"
)

func TestParseGateway(t *testing.T) {
	tests := []struct{ in, base, ws string }{
		{"http://127.0.0.1:7780", "http://127.0.0.1:7780", "ws://127.0.0.1:7780/v1/nodes/connect"},
		{" http://127.0.0.1:7780/ ", "http://127.0.0.1:7780", "ws://127.0.0.1:7780/v1/nodes/connect"},
		{"ws://gw:80//", "http://gw:80", "ws://gw:80/v1/nodes/connect"},
		{"WSS://gw/skillgate/", "https://gw/skillgate", "wss://gw/skillgate/v1/nodes/connect"},
		{"https://gw/a%2Fb", "https://gw/a/b", "wss://gw/a/b/v1/nodes/connect"},
		{"http://gw?x=1#frag", "http://gw?x=1#frag", "ws://gw/v1/nodes/connect?x=1"},
	}
	for _, tt := range tests {
		u, err := ParseGateway(tt.in)
		if err != nil {
			t.Errorf("ParseGateway(%q): %v", tt.in, err)
			continue
		}
		if u.String() != tt.base || ConnectURL(u) != tt.ws {
			t.Errorf("ParseGateway(%q) = %s, connect %s; want %s, %s", tt.in, u, ConnectURL(u), tt.base, tt.ws)
		}
	}
	bad := []struct {
		in      string
		problem GatewayProblem
		msg     string
	}{
		{"127.0.0.1:7780", NoScheme, `"127.0.0.1:7780": the scheme must be http, https, ws or wss (e.g. http://127.0.0.1:7780)`},
		{"http://gw/%zz", NotURL, `not a URL: parse "http://gw/%zz": invalid URL escape "%zz"`},
		{"ftp://gw", BadScheme, `"ftp://gw": the scheme must be http, https, ws or wss`},
		{"http://", NoHost, `"http://" has no host`},
		{"http://u:pw@gw", Credentials, "credentials in the URL are not supported; put the token in SKILLGATE_NODE_TOKEN or --token-file"},
	}
	for _, tt := range bad {
		_, err := ParseGateway(tt.in)
		ge, ok := errors.AsType[*GatewayURLError](err)
		if !ok || ge.Problem != tt.problem || err.Error() != tt.msg {
			t.Errorf("ParseGateway(%q): %v; want problem %d, %q", tt.in, err, tt.problem, tt.msg)
		}
	}
}
