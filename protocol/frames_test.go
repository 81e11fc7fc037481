package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/coder/websocket"
)

var baseline = []string{"filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"}

func connectParams() ConnectParams {
	return ConnectParams{
		Protocol: 1,
		Token:    "s3cret",
		Client:   "skillgate-node/0.1.0",
		Node:     NodeInfo{ID: "mac-1", OS: "darwin", Roles: []string{"execution"}, Capabilities: baseline},
	}
}

// TestSessionFrames encodes every frame of the DESIGN.md session example
// with the constructors, compares the bytes, then decodes them again.
func TestSessionFrames(t *testing.T) {
	tests := []struct {
		name  string
		build func() ([]byte, error)
		wire  string
		// check decodes the frame's params or payload with the typed parser
		// and returns it, to compare with want.
		check func(Frame) (any, error)
		want  any
	}{
		{
			name:  "node connect",
			build: func() ([]byte, error) { return NewReq("1", MethodConnect, connectParams()) },
			wire: `{"type":"req","id":"1","method":"connect","params":{"protocol":1,"token":"s3cret","client":"skillgate-node/0.1.0",` +
				`"node":{"id":"mac-1","os":"darwin","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}}`,
			check: func(f Frame) (any, error) { return ParseConnectParams(f.Params) },
			want:  connectParams(),
		},
		{
			name: "gateway connect ok",
			build: func() ([]byte, error) {
				return NewRes("1", ConnectResult{Protocol: 1, Interest: Interest{Bins: []string{"gh", "tmux"}, Env: []string{"GITHUB_TOKEN"}}})
			},
			wire:  `{"type":"res","id":"1","ok":true,"payload":{"protocol":1,"interest":{"bins":["gh","tmux"],"env":["GITHUB_TOKEN"]}}}`,
			check: func(f Frame) (any, error) { return ParseConnectResult(f.Payload) },
			want:  ConnectResult{Protocol: 1, Interest: Interest{Bins: []string{"gh", "tmux"}, Env: []string{"GITHUB_TOKEN"}}},
		},
		{
			name: "node facts.update",
			build: func() ([]byte, error) {
				return NewReq("2", MethodFactsUpdate, FactsUpdate{Env: []string{"GITHUB_TOKEN"}, HostBinStatus: map[string]bool{"tmux": false, "gh": true}})
			},
			wire:  `{"type":"req","id":"2","method":"facts.update","params":{"env":["GITHUB_TOKEN"],"hostBinStatus":{"gh":true,"tmux":false}}}`,
			check: func(f Frame) (any, error) { return ParseFactsUpdate(f.Params) },
			want:  FactsUpdate{Env: []string{"GITHUB_TOKEN"}, HostBinStatus: map[string]bool{"gh": true, "tmux": false}},
		},
		{
			name:  "gateway facts.update ok",
			build: func() ([]byte, error) { return NewRes("2", nil) },
			wire:  `{"type":"res","id":"2","ok":true}`,
		},
		{
			name:  "gateway evt interest",
			build: func() ([]byte, error) { return NewEvt(EventInterest, Interest{Bins: []string{"gh"}}) },
			wire:  `{"type":"evt","event":"interest","payload":{"bins":["gh"],"env":[]}}`,
			check: func(f Frame) (any, error) { return ParseInterest(f.Payload) },
			want:  Interest{Bins: []string{"gh"}, Env: []string{}},
		},
		{
			name:  "node facts.update, nothing found",
			build: func() ([]byte, error) { return NewReq("3", MethodFactsUpdate, FactsUpdate{}) },
			wire:  `{"type":"req","id":"3","method":"facts.update","params":{"env":[],"hostBinStatus":{}}}`,
			check: func(f Frame) (any, error) { return ParseFactsUpdate(f.Params) },
			want:  FactsUpdate{Env: []string{}, HostBinStatus: map[string]bool{}},
		},
		{
			name:  "gateway refuses connect",
			build: func() ([]byte, error) { return NewErr("1", CodeUnauthorized, "unknown token"), nil },
			wire:  `{"type":"res","id":"1","ok":false,"error":{"code":"unauthorized","message":"unknown token"}}`,
		},
		{
			name:  "gateway answers an unreadable frame",
			build: func() ([]byte, error) { return NewErr("", CodeBadRequest, "frame: must be a JSON object"), nil },
			wire:  `{"type":"res","ok":false,"error":{"code":"bad_request","message":"frame: must be a JSON object"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.build()
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if string(got) != tt.wire {
				t.Fatalf("encoded\n got %s\nwant %s", got, tt.wire)
			}
			f, err := DecodeFrame([]byte(tt.wire))
			if err != nil {
				t.Fatalf("DecodeFrame: %v", err)
			}
			again, err := json.Marshal(f)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if string(again) != tt.wire {
				t.Fatalf("decode+encode\n got %s\nwant %s", again, tt.wire)
			}
			if tt.check == nil {
				return
			}
			v, err := tt.check(f)
			if err != nil {
				t.Fatalf("typed parse: %v", err)
			}
			if !reflect.DeepEqual(v, tt.want) {
				t.Fatalf("typed parse\n got %#v\nwant %#v", v, tt.want)
			}
		})
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	long := strings.Repeat("x", MaxFrameIDLen+1)
	tests := []struct {
		in, want string
	}{
		{``, `frame: must be a JSON object`},
		{`not json`, `frame: must be a JSON object`},
		{`[1]`, `frame: must be a JSON object`},
		{`{"type":"req"`, `frame: not valid JSON`},
		{`{"type":"req","id":"1","method":"x"} {}`, `frame: not valid JSON`},
		{`{}`, `frame: "type" is missing`},
		{`{"type":null}`, `frame: "type" is missing`},
		{`{"Type":"req","id":"1","method":"connect"}`, `frame: "type" is missing`},
		{`{"type":"request"}`, `frame: "type" must be "req", "res" or "evt"`},
		{`{"type":1}`, `frame: "type" must be "req", "res" or "evt"`},
		{`{"type":"req","method":"connect"}`, `req: "id" is missing`},
		{`{"type":"req","id":1,"method":"connect"}`, `req: "id" must be a string`},
		{`{"type":"req","id":"","method":"connect"}`, `req: "id" is empty`},
		{`{"type":"req","id":"` + long + `","method":"connect"}`, `req: "id" is longer than 128 bytes`},
		{`{"type":"req","id":"1"}`, `req: "method" is missing`},
		{`{"type":"req","id":"1","method":"connect","params":[1]}`, `req: "params" must be an object`},
		{`{"type":"req","id":"1","method":"connect","params":"x"}`, `req: "params" must be an object`},
		{`{"type":"req","id":"1","method":"connect","ok":true}`, `req: "ok" is not allowed`},
		{`{"type":"req","id":"1","method":"connect","event":"interest"}`, `req: "event" is not allowed`},
		{`{"type":"res","id":"1"}`, `res: "ok" is missing`},
		{`{"type":"res","id":"1","ok":"true"}`, `res: "ok" must be true or false`},
		{`{"type":"res","ok":true}`, `res: "id" is missing`},
		{`{"type":"res","id":"1","ok":true,"error":{"code":"x","message":"y"}}`, `res: "error" is not allowed when "ok" is true`},
		{`{"type":"res","id":"1","ok":false}`, `res: "error" is missing (required when "ok" is false)`},
		{`{"type":"res","id":"1","ok":false,"error":"nope"}`, `res: "error" must be an object`},
		{`{"type":"res","id":"1","ok":false,"error":{"message":"y"}}`, `res: "error.code" is missing`},
		{`{"type":"res","id":"1","ok":false,"error":{"code":"x","message":2}}`, `res: "error.message" must be a string`},
		{`{"type":"res","id":"1","ok":false,"payload":{},"error":{"code":"x"}}`, `res: "payload" is not allowed when "ok" is false`},
		{`{"type":"res","id":"1","ok":true,"method":"connect"}`, `res: "method" is not allowed`},
		{`{"type":"evt","payload":{}}`, `evt: "event" is missing`},
		{`{"type":"evt","id":"1","event":"interest"}`, `evt: "id" is not allowed`},
		{`{"type":"evt","event":"interest","ok":true}`, `evt: "ok" is not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := DecodeFrame([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeFrame(%s) = nil error, want %q", tt.in, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("DecodeFrame(%s)\n got %q\nwant prefix %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestDecodeFrameTolerance(t *testing.T) {
	// Unknown keys are ignored; null counts as absent.
	f, err := DecodeFrame([]byte(` {"type":"req","id":"7","method":"facts.update","params":null,"ok":null,"trace":"abc"} `))
	if err != nil {
		t.Fatal(err)
	}
	if f.Params != nil || f.OK != nil || f.ID != "7" || f.Method != MethodFactsUpdate {
		t.Fatalf("got %+v", f)
	}
	// An error answer without id: the answered frame had none.
	f, err = DecodeFrame([]byte(`{"type":"res","ok":false,"error":{"code":"bad_request"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.ID != "" || f.Error == nil || f.Error.Code != CodeBadRequest || f.Error.Message != "" {
		t.Fatalf("got %+v", f)
	}
}

func TestParseConnectParamsErrors(t *testing.T) {
	node := `"node":{"id":"mac-1","os":"darwin","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}`
	tests := []struct {
		in, code, msg string
	}{
		{`[]`, CodeBadRequest, `connect: must be a JSON object`},
		{`{` + node + `}`, CodeBadRequest, `connect: "protocol" is missing`},
		{`{"protocol":"1",` + node + `}`, CodeBadRequest, `connect: "protocol" must be an integer`},
		{`{"protocol":1.5,` + node + `}`, CodeBadRequest, `connect: "protocol" must be an integer`},
		{`{"protocol":2,"node":"whatever"}`, CodeUnsupportedProtocol, `protocol: version 2 is not supported (this side speaks 1)`},
		{`{"protocol":1,"token":5,` + node + `}`, CodeBadRequest, `connect: "token" must be a string`},
		{`{"protocol":1,"client":[],` + node + `}`, CodeBadRequest, `connect: "client" must be a string`},
		{`{"protocol":1}`, CodeBadRequest, `connect: "node" is missing`},
		{`{"protocol":1,"node":[]}`, CodeBadRequest, `connect: "node" must be an object`},
		{`{"protocol":1,"node":{"id":1}}`, CodeBadRequest, `connect: "node.id" must be a string`},
		{`{"protocol":1,"node":{"id":"a","os":"linux","roles":"execution"}}`, CodeBadRequest, `connect: "node.roles" must be a list of strings`},
		{`{"protocol":1,"node":{"id":"a","os":"linux","roles":["execution"],"capabilities":[1]}}`, CodeBadRequest, `connect: "node.capabilities" must be a list of strings`},
		{`{"protocol":1,"node":{"os":"linux","roles":["execution"],"capabilities":[]}}`, CodeInvalidFacts, `node.id: is empty`},
		{`{"protocol":1,"node":{"id":"a/b","os":"linux","roles":["execution"]}}`, CodeInvalidFacts, `node.id: "a/b" contains a slash or backslash`},
		{`{"protocol":1,"node":{"id":"a","roles":["execution"]}}`, CodeInvalidFacts, `node.os: is empty`},
		{`{"protocol":1,"node":{"id":"a","os":"\u001b]0;pwned\u0007","roles":["execution"]}}`, CodeInvalidFacts,
			`node.os: "\x1b]0;pwned\a" is not a lowercase name of letters, digits, '.', '_' or '-' (expected runtime.GOOS, e.g. linux or darwin)`},
		{`{"protocol":1,"node":{"id":"a\u200b","os":"linux","roles":["execution"]}}`, CodeInvalidFacts, `node.id: "a\u200b" contains the invisible character U+200B`},
		{`{"protocol":1,"node":{"id":"a","os":"linux","roles":[]}}`, CodeInvalidFacts, `node.roles: is empty`},
		{`{"protocol":1,"node":{"id":"a","os":"linux","roles":["gpu"]}}`, CodeInvalidFacts, `node.roles[0]: unknown role "gpu"`},
		{`{"protocol":1,"node":{"id":"a","os":"linux","roles":["specialized"],"capabilities":["fly"]}}`, CodeInvalidFacts, `node.capabilities[0]: unknown capability "fly"`},
		{`{"protocol":1,"node":{"id":"a","os":"linux","roles":["execution"],"capabilities":["shell.exec"]}}`, CodeInvalidFacts,
			`node.capabilities: an execution host must have filesystem.list, filesystem.read, filesystem.write, shell.exec; missing filesystem.list, filesystem.read, filesystem.write`},
		{`{"protocol":1,"token":"` + strings.Repeat("t", MaxTokenLen+1) + `",` + node + `}`, CodeBadRequest, `token: longer than 4096 bytes`},
		{`{"protocol":1,"client":"` + strings.Repeat("c", MaxClientLen+1) + `",` + node + `}`, CodeBadRequest, `client: longer than 256 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			_, err := ParseConnectParams(json.RawMessage(tt.in))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *protocol.Error", err, err)
			}
			if pe.Code != tt.code || !strings.HasPrefix(pe.Message, tt.msg) {
				t.Fatalf("got %s: %s\nwant %s: %s…", pe.Code, pe.Message, tt.code, tt.msg)
			}
		})
	}
}

func TestConnectParamsValidate(t *testing.T) {
	p := connectParams()
	if err := p.Validate(); err != nil {
		t.Fatalf("valid params: %v", err)
	}
	p.Protocol = 0
	if err := p.Validate(); err == nil || err.(*Error).Code != CodeUnsupportedProtocol {
		t.Fatalf("protocol 0: got %v", err)
	}
	p = connectParams()
	p.Token = "" // the gateway decides whether an empty token is acceptable
	p.Node.Roles = []string{"specialized"}
	p.Node.Capabilities = nil
	if err := p.Validate(); err != nil {
		t.Fatalf("specialized host without capabilities: %v", err)
	}
}

func TestParseFactsUpdateErrors(t *testing.T) {
	many := `"` + strings.Repeat(`x","`, MaxNames) + `x"`
	tests := []struct {
		in, code, msg string
	}{
		{`"x"`, CodeBadRequest, `facts.update: must be a JSON object`},
		{`{"env":"A"}`, CodeBadRequest, `facts.update: "env" must be a list of strings`},
		{`{"env":[null]}`, CodeInvalidFacts, `env[0]: invalid name ""`},
		{`{"env":[` + many + `]}`, CodeInvalidFacts, `env: 4097 entries, more than 4096`},
		{`{"hostBinStatus":{"gh":"yes"}}`, CodeBadRequest, `facts.update: "hostBinStatus" must be an object of booleans`},
		{`{"hostBinStatus":[]}`, CodeBadRequest, `facts.update: "hostBinStatus" must be an object of booleans`},
		{`{"hostBinStatus":{"":true}}`, CodeInvalidFacts, `hostBinStatus: invalid binary name ""`},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			_, err := ParseFactsUpdate(json.RawMessage(tt.in))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *protocol.Error", err, err)
			}
			if pe.Code != tt.code || !strings.HasPrefix(pe.Message, tt.msg) {
				t.Fatalf("got %s: %s\nwant %s: %s…", pe.Code, pe.Message, tt.code, tt.msg)
			}
		})
	}
	u, err := ParseFactsUpdate(json.RawMessage(`{}`))
	if err != nil || u.Env == nil || u.HostBinStatus == nil {
		t.Fatalf("empty update: %+v, %v", u, err)
	}
}

func TestParseInterestAndResultErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		msg  string
	}{
		{"bins not a list", second(ParseInterest(json.RawMessage(`{"bins":"gh"}`))), `interest: "bins" must be a list of strings`},
		{"env of numbers", second(ParseInterest(json.RawMessage(`{"env":[1]}`))), `interest: "env" must be a list of strings`},
		{"not an object", second(ParseInterest(json.RawMessage(`null`))), `interest: must be a JSON object`},
		{"result without protocol", second(ParseConnectResult(json.RawMessage(`{"interest":{}}`))), `connect result: "protocol" must be an integer`},
		{"result of another version", second(ParseConnectResult(json.RawMessage(`{"protocol":2}`))), `protocol: version 2 is not supported`},
		{"result with bad interest", second(ParseConnectResult(json.RawMessage(`{"protocol":1,"interest":[]}`))), `interest: must be a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil || !strings.Contains(tt.err.Error(), tt.msg) {
				t.Fatalf("got %v, want …%s…", tt.err, tt.msg)
			}
		})
	}
	r, err := ParseConnectResult(json.RawMessage(`{"protocol":1}`))
	if err != nil || r.Interest.Bins == nil || r.Interest.Env == nil {
		t.Fatalf("result without interest: %+v, %v", r, err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestNewReqMarshalError(t *testing.T) {
	if _, err := NewReq("1", MethodConnect, make(chan int)); err == nil {
		t.Fatal("NewReq with an unmarshallable params: no error")
	}
}

func TestNodeInfoHostFacts(t *testing.T) {
	h := connectParams().Node.HostFacts()
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"mac-1","os":"darwin","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"],"env":[],"hostBinStatus":{}}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}

// TestCloseCodes pins the close statuses to the numbers DESIGN.md gives
// and to the WebSocket library's names for them, and the close reasons
// nodes already deployed compare: a changed value would break them.
func TestCloseCodes(t *testing.T) {
	codes := []struct {
		name string
		got  websocket.StatusCode
		want websocket.StatusCode
		num  int
	}{
		{"CloseNormal", CloseNormal, websocket.StatusNormalClosure, 1000},
		{"CloseGoingAway", CloseGoingAway, websocket.StatusGoingAway, 1001},
		{"CloseUnsupportedData", CloseUnsupportedData, websocket.StatusUnsupportedData, 1003},
		{"ClosePolicyViolation", ClosePolicyViolation, websocket.StatusPolicyViolation, 1008},
		{"CloseMessageTooBig", CloseMessageTooBig, websocket.StatusMessageTooBig, 1009},
		{"CloseInternalError", CloseInternalError, websocket.StatusInternalError, 1011},
		{"CloseTryAgainLater", CloseTryAgainLater, websocket.StatusTryAgainLater, 1013},
	}
	for _, c := range codes {
		if c.got != c.want || int(c.got) != c.num {
			t.Errorf("%s = %d, want %d (%s)", c.name, c.got, c.num, c.want)
		}
	}
	reasons := map[string]string{
		CloseReasonReplaced:       "replaced",
		CloseReasonConnectTimeout: "connect timeout",
		CloseReasonPingTimeout:    "ping timeout",
		CloseReasonTokenRevoked:   "token revoked",
		CloseReasonGatewayFull:    "gateway full",
		CloseReasonBinaryFrame:    "binary frames are not part of the protocol",
		CloseReasonWriteFailed:    "write failed",
		CloseReasonAnswerFailed:   "connect answer failed",
		CloseReasonGatewayStop:    "gateway shutting down",
		CloseReasonNodeStop:       "node shutting down",
	}
	for got, want := range reasons {
		if got != want {
			t.Errorf("close reason %q, want %q", got, want)
		}
	}
	// A close reason must fit a control frame (125 bytes, 2 for the code).
	for r := range reasons {
		if len(r) > 123 {
			t.Errorf("close reason %q is %d bytes, over 123", r, len(r))
		}
	}
}

func TestNewResRaw(t *testing.T) {
	payload, _ := json.Marshal(map[string]any{"protocol": 1, "interest": map[string]any{"bins": []string{"a<b"}, "env": []string{}}})
	for _, id := range []string{"1", "x<y&z", "é\"q"} {
		want, err := NewRes(id, json.RawMessage(payload))
		if err != nil {
			t.Fatal(err)
		}
		if got := NewResRaw(id, payload); string(got) != string(want) {
			t.Errorf("NewResRaw(%q) = %s, NewRes %s", id, got, want)
		}
	}
}

// TestSmallInt: smallInt agrees with encoding/json on what it reads, and
// leaves the rest to it.
func TestSmallInt(t *testing.T) {
	for _, in := range []string{"0", "1", "-1", "-0", "7", "42", "123456789", "1234567890", "01", "-", "", "1.0", "1e0", " 1", "1 ", "+1", "- 1", "--1", "9x"} {
		n, ok := smallInt([]byte(in))
		var want int
		err := json.Unmarshal([]byte(in), &want)
		if ok && (err != nil || n != want) {
			t.Errorf("smallInt(%q) = %d, but encoding/json: %d, %v", in, n, want, err)
		}
		if !ok && len(in) <= 3 && !strings.Contains(in, " ") && err == nil {
			t.Errorf("smallInt(%q) leaves to encoding/json a short integer it reads as %d", in, want)
		}
	}
}

// TestConnectSharesKnownNames: the roles, capabilities and OS of a connect
// are the package's strings, not copies of the frame's bytes; unknown
// ones are read as before.
func TestConnectSharesKnownNames(t *testing.T) {
	raw := []byte(`{"protocol":1,"node":{"id":"n","os":"linux","roles":["execution"],"capabilities":["shell.exec","filesystem.list","filesystem.read","filesystem.write"]}}`)
	a, err := ParseConnectParams(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseConnectParams(bytes.Clone(raw))
	if err != nil {
		t.Fatal(err)
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(a.Node.OS, b.Node.OS) || !same(a.Node.Roles[0], b.Node.Roles[0]) || !same(a.Node.Capabilities[0], b.Node.Capabilities[0]) ||
		!same(a.Node.Capabilities[3], Capabilities[2]) {
		t.Errorf("the names of two connects are not shared: %+v %+v", a.Node, b.Node)
	}
	if want := []string{"shell.exec", "filesystem.list", "filesystem.read", "filesystem.write"}; !slices.Equal(a.Node.Capabilities, want) {
		t.Errorf("capabilities %v, want %v", a.Node.Capabilities, want)
	}
	c, err := ParseConnectParams([]byte(`{"protocol":1,"node":{"id":"n","os":"plan9","roles":["execution"],"capabilities":["filesystem.list","filesystem.read","filesystem.write","shell.exec"]}}`))
	if err != nil || c.Node.OS != "plan9" {
		t.Errorf("an OS of no list: %+v, %v", c.Node, err)
	}
}

// TestResFastPaths: NewResOK and NewResRaw write what encoding/json
// writes, whatever the id.
func TestResFastPaths(t *testing.T) {
	payload := json.RawMessage(`{"protocol":1,"interest":{"bins":["gh"],"env":[]}}`)
	for _, id := range []string{"1", "42", "", "a-b_c.d", `q"uote`, `back\slash`, "<tag>&", "tab\there", "é", "\u2028", "~ !#$%'()*+,/:;=?@[]^`{|}"} {
		want, err := NewRes(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := NewResOK(id); !bytes.Equal(got, want) {
			t.Errorf("NewResOK(%q) = %s, want %s", id, got, want)
		}
		qid, _ := json.Marshal(id)
		wantRaw := `{"type":"res","id":` + string(qid) + `,"ok":true,"payload":` + string(payload) + `}`
		if got := NewResRaw(id, payload); string(got) != wantRaw {
			t.Errorf("NewResRaw(%q) = %s, want %s", id, got, wantRaw)
		}
		var f Frame
		if err := json.Unmarshal(NewResRaw(id, payload), &f); err != nil || f.ID != id {
			t.Errorf("NewResRaw(%q) decodes to id %q, %v", id, f.ID, err)
		}
	}
}

// TestIsFatalCode: the codes that refuse a node for good, and the ones it
// retries (CodeUnavailable above all: a full gateway is not a wrong node).
func TestIsFatalCode(t *testing.T) {
	for _, c := range []struct {
		code  string
		fatal bool
	}{
		{CodeUnauthorized, true},
		{CodeInvalidFacts, true},
		{CodeUnsupportedProtocol, true},
		{CodeBadRequest, false},
		{CodeUnknownMethod, false},
		{CodeNotConnected, false},
		{CodeUnavailable, false},
		{"", false},
		{"UNAUTHORIZED", false},
	} {
		if got := IsFatalCode(c.code); got != c.fatal {
			t.Errorf("IsFatalCode(%q) = %v, want %v", c.code, got, c.fatal)
		}
	}
}
