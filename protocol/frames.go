package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// Version is the protocol version this package speaks. A node sends it in
// connect; the gateway answers with the same number or refuses the node with
// CodeUnsupportedProtocol.
const Version = 1

// ReadLimit is the largest text frame either side accepts (1 MiB). The
// gateway closes a connection that sends a bigger one with
// CloseMessageTooBig (1009).
const ReadLimit = 1 << 20

// Frame kinds, the values of Frame.Type.
const (
	TypeReq = "req"
	TypeRes = "res"
	TypeEvt = "evt"
)

// Methods a node may call.
const (
	MethodConnect     = "connect"
	MethodFactsUpdate = "facts.update"
)

// EventInterest is the event the gateway sends when the set of binary and
// env-var names it wants to know about changes.
const EventInterest = "interest"

// Error codes carried in Error.Code of a failed res.
const (
	CodeBadRequest          = "bad_request"
	CodeUnauthorized        = "unauthorized"
	CodeUnsupportedProtocol = "unsupported_protocol"
	CodeInvalidFacts        = "invalid_facts"
	CodeUnknownMethod       = "unknown_method"
	CodeNotConnected        = "not_connected"
	// CodeUnavailable refuses a connect the gateway has no room for; unlike
	// the codes above it is not final: the node retries with backoff.
	CodeUnavailable = "unavailable"
)

// IsFatalCode reports whether an error code refuses a node for good:
// CodeUnauthorized, CodeInvalidFacts or CodeUnsupportedProtocol, which
// retrying cannot fix (the node's token, facts or version must change).
// It is the one list of them: the node stops on these and retries every
// other code, and skillgate-fleet aborts its run on the same ones.
func IsFatalCode(code string) bool {
	switch code {
	case CodeUnauthorized, CodeInvalidFacts, CodeUnsupportedProtocol:
		return true
	}
	return false
}

// Limits on frame fields that have no natural bound, so that a peer cannot
// make the other side hold large strings it only echoes or logs.
const (
	MaxFrameIDLen  = 128  // a req/res "id"
	MaxNameLenWire = 64   // a "method" or "event"
	MaxTokenLen    = 4096 // connect "token"
	MaxClientLen   = 256  // connect "client"
	MaxMessageLen  = 4096 // error "message"
)

// Frame is one JSON text frame of the protocol. Which fields are set depends
// on Type:
//
//	req: ID, Method, Params (optional)
//	res: ID, OK, then Payload (optional) when OK is true or Error when it is false
//	evt: Event, Payload (optional)
//
// The field order is the wire order of the DESIGN.md examples.
type Frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	OK      *bool           `json:"ok,omitempty"`
	Event   string          `json:"event,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is the error object of a failed res. It is also the error type the
// Parse and Validate functions of this package return, so that the gateway
// can answer with its Code (use errors.As).
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NodeInfo is the identity part of a node's host facts, sent in connect.
type NodeInfo struct {
	ID           string   `json:"id"`
	OS           string   `json:"os"`
	Roles        []string `json:"roles"`
	Capabilities []string `json:"capabilities"`
}

// HostFacts returns the host facts of this node before it reported any
// binaries or env names (Env and HostBinStatus empty, not nil).
func (n NodeInfo) HostFacts() HostFacts {
	return HostFacts{
		ID:            n.ID,
		OS:            n.OS,
		Roles:         n.Roles,
		Capabilities:  n.Capabilities,
		Env:           []string{},
		HostBinStatus: map[string]bool{},
	}
}

// ConnectParams are the params of req connect, the first frame of a node.
type ConnectParams struct {
	Protocol int      `json:"protocol"`
	Token    string   `json:"token"`
	Client   string   `json:"client"`
	Node     NodeInfo `json:"node"`
}

// Validate checks the protocol version, the sizes of token and client, and
// the node's identity (reusing HostFacts.Validate). The error is an *Error:
// CodeUnsupportedProtocol for another version, CodeBadRequest for an
// oversized token or client, CodeInvalidFacts for the node part, whose
// message names the field ("node.capabilities: an execution host must have …").
// Whether the token is right is for the gateway to decide.
func (p ConnectParams) Validate() error {
	if p.Protocol != Version {
		return unsupported(p.Protocol)
	}
	if len(p.Token) > MaxTokenLen {
		return errorf(CodeBadRequest, "token: longer than %d bytes", MaxTokenLen)
	}
	if len(p.Client) > MaxClientLen {
		return errorf(CodeBadRequest, "client: longer than %d bytes", MaxClientLen)
	}
	facts := p.Node.HostFacts()
	if err := facts.Validate(); err != nil {
		return errorf(CodeInvalidFacts, "node.%v", err)
	}
	return nil
}

func unsupported(v int) *Error {
	return errorf(CodeUnsupportedProtocol, "protocol: version %d is not supported (this side speaks %d)", v, Version)
}

// ConnectResult is the payload of a successful connect res.
type ConnectResult struct {
	Protocol int      `json:"protocol"`
	Interest Interest `json:"interest"`
}

// Interest is the set of binary and env-var names the gateway wants a node to
// report on. It is the payload of evt interest and part of ConnectResult.
type Interest struct {
	Bins []string `json:"bins"`
	Env  []string `json:"env"`
}

// MarshalJSON writes nil lists as [] so that the peer never sees null.
func (i Interest) MarshalJSON() ([]byte, error) {
	type plain Interest // no MarshalJSON method: avoids recursion
	p := plain(i)
	if p.Bins == nil {
		p.Bins = []string{}
	}
	if p.Env == nil {
		p.Env = []string{}
	}
	return json.Marshal(p)
}

// FactsUpdate is the params of req facts.update: the asked env names that
// are set on the node, and for every asked binary name whether it exists.
type FactsUpdate struct {
	Env           []string        `json:"env"`
	HostBinStatus map[string]bool `json:"hostBinStatus"`
}

// MarshalJSON writes nil fields as [] and {} so that the peer never sees null.
func (f FactsUpdate) MarshalJSON() ([]byte, error) {
	type plain FactsUpdate
	p := plain(f)
	if p.Env == nil {
		p.Env = []string{}
	}
	if p.HostBinStatus == nil {
		p.HostBinStatus = map[string]bool{}
	}
	return json.Marshal(p)
}

// Validate checks the sizes of a facts update against the limits of
// HostFacts. The error is an *Error with CodeInvalidFacts.
func (f FactsUpdate) Validate() error {
	if len(f.Env) > MaxNames {
		return errorf(CodeInvalidFacts, "env: %d entries, more than %d", len(f.Env), MaxNames)
	}
	for i, n := range f.Env {
		if n == "" || len(n) > MaxNameLen {
			return errorf(CodeInvalidFacts, "env[%d]: invalid name %q", i, n)
		}
	}
	if len(f.HostBinStatus) > MaxNames {
		return errorf(CodeInvalidFacts, "hostBinStatus: %d entries, more than %d", len(f.HostBinStatus), MaxNames)
	}
	bad := false
	for n := range f.HostBinStatus { // no sort on the hot path of every update
		if n == "" || len(n) > MaxNameLen {
			bad = true
			break
		}
	}
	if !bad {
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(f.HostBinStatus)) { // the same name every time
		if n == "" || len(n) > MaxNameLen {
			return errorf(CodeInvalidFacts, "hostBinStatus: invalid binary name %q", n)
		}
	}
	return nil
}

// DecodeFrame parses and checks one text frame. Errors name the frame kind
// and the field, e.g. `req: "id" is missing`.
//
// Rules: the frame is one JSON object; "type" is "req", "res" or "evt"; a req
// has a non-empty string "id" and "method" and, optionally, an object
// "params"; a res has a boolean "ok" and a non-empty "id", then an optional
// "payload" when ok is true, or an "error" object with a non-empty "code"
// when it is false (its "id" may then be missing: an answer to a frame whose
// id could not be read); an evt has a non-empty "event" and an optional
// "payload". Keys are matched exactly (case-sensitively). A key that belongs
// to another frame kind is an error, because it shows a confused peer.
// Unknown keys are ignored, so that a later revision of version 1 may add
// optional fields without breaking older peers. A JSON null counts as absent.
func DecodeFrame(data []byte) (Frame, error) {
	buf := getMembers()
	o, err := parseObjectIn(*buf, "frame", data)
	defer putMembers(buf, o)
	if err != nil {
		return Frame{}, err
	}
	var f Frame
	typ, present, err := o.strIn("type", knownFrameNames)
	if !present {
		return Frame{}, fmt.Errorf(`frame: "type" is missing`)
	}
	if err != nil || (typ != TypeReq && typ != TypeRes && typ != TypeEvt) {
		return Frame{}, fmt.Errorf(`frame: "type" must be "req", "res" or "evt"`)
	}
	f.Type = typ
	o.what = typ

	switch typ {
	case TypeReq:
		if err := o.forbid("ok", "error", "event", "payload"); err != nil {
			return Frame{}, err
		}
		if f.ID, err = o.name("id", MaxFrameIDLen); err != nil {
			return Frame{}, err
		}
		if f.Method, err = o.name("method", MaxNameLenWire); err != nil {
			return Frame{}, err
		}
		if p := o.raw("params"); p != nil {
			if p[0] != '{' {
				return Frame{}, fmt.Errorf(`req: "params" must be an object`)
			}
			f.Params = p
		}
	case TypeRes:
		if err := o.forbid("method", "params", "event"); err != nil {
			return Frame{}, err
		}
		b, present, err := o.boolean("ok")
		if err != nil {
			return Frame{}, err
		}
		if !present {
			return Frame{}, fmt.Errorf(`res: "ok" is missing`)
		}
		f.OK = &b
		if b || o.raw("id") != nil {
			if f.ID, err = o.name("id", MaxFrameIDLen); err != nil {
				return Frame{}, err
			}
		}
		if b {
			if err := o.forbid("error"); err != nil {
				return Frame{}, fmt.Errorf(`res: "error" is not allowed when "ok" is true`)
			}
			f.Payload = o.raw("payload")
			break
		}
		if o.raw("payload") != nil {
			return Frame{}, fmt.Errorf(`res: "payload" is not allowed when "ok" is false`)
		}
		if f.Error, err = decodeError(o.raw("error")); err != nil {
			return Frame{}, err
		}
	case TypeEvt:
		if err := o.forbid("id", "method", "params", "ok", "error"); err != nil {
			return Frame{}, err
		}
		if f.Event, err = o.name("event", MaxNameLenWire); err != nil {
			return Frame{}, err
		}
		f.Payload = o.raw("payload")
	}
	return f, nil
}

func decodeError(raw json.RawMessage) (*Error, error) {
	if raw == nil {
		return nil, fmt.Errorf(`res: "error" is missing (required when "ok" is false)`)
	}
	o, err := parseObject("res", raw)
	if err != nil {
		return nil, fmt.Errorf(`res: "error" must be an object`)
	}
	o.prefix = "error."
	code, err := o.name("code", MaxNameLenWire)
	if err != nil {
		return nil, err
	}
	msg, _, err := o.str("message")
	if err != nil {
		return nil, err
	}
	if len(msg) > MaxMessageLen {
		msg = msg[:MaxMessageLen]
	}
	return &Error{Code: code, Message: msg}, nil
}

// knownFrameNames are the frame types, methods and events, and the first
// request ids a node sends: decoded without a copy of the frame's bytes.
var knownFrameNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{TypeReq, TypeRes, TypeEvt, MethodConnect, MethodFactsUpdate, EventInterest} {
		m[s] = s
	}
	for i := 1; i <= 16; i++ {
		s := strconv.Itoa(i)
		m[s] = s
	}
	return m
}()

// smallInt reads a JSON integer of at most nine digits, as encoding/json
// would into an int, without its reflection; false for anything else
// (which encoding/json then decides).
func smallInt(b []byte) (int, bool) {
	d := b
	neg := len(d) > 0 && d[0] == '-'
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 9 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	n := 0
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// knownNames are the roles, capabilities and common operating systems a
// connect names: a node's values are these strings, shared by every node,
// rather than copies of the frame's bytes (one allocation each, kept for
// as long as the node is connected).
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, l := range [][]string{Roles, Capabilities, {"linux", "darwin", "windows", "freebsd", "openbsd", "netbsd", "android", "ios"}} {
		for _, s := range l {
			m[s] = s
		}
	}
	return m
}()

// ParseConnectParams decodes and validates the params of req connect. The
// error is an *Error: CodeUnsupportedProtocol when "protocol" is another
// version (checked first, since another version may have another shape),
// CodeBadRequest when the params are malformed, CodeInvalidFacts when the
// node's facts are invalid. Unknown keys are ignored, as in DecodeFrame.
func ParseConnectParams(raw json.RawMessage) (ConnectParams, error) {
	buf, nbuf := getMembers(), getMembers()
	o, err := parseObjectIn(*buf, "connect", raw)
	defer putMembers(buf, o)
	if err != nil {
		return ConnectParams{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	var p ConnectParams
	pr := o.raw("protocol")
	if pr == nil {
		return p, errorf(CodeBadRequest, `connect: "protocol" is missing`)
	}
	if n, ok := smallInt(pr); ok {
		p.Protocol = n
	} else if err := json.Unmarshal(pr, &p.Protocol); err != nil {
		return p, errorf(CodeBadRequest, `connect: "protocol" must be an integer`)
	}
	if p.Protocol != Version {
		return ConnectParams{}, unsupported(p.Protocol)
	}
	bad := func(err error) (ConnectParams, error) {
		return ConnectParams{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	if p.Token, _, err = o.str("token"); err != nil {
		return bad(err)
	}
	if p.Client, _, err = o.str("client"); err != nil {
		return bad(err)
	}
	nr := o.raw("node")
	if nr == nil {
		return bad(fmt.Errorf(`connect: "node" is missing`))
	}
	n, err := parseObjectIn(*nbuf, "connect", nr)
	defer putMembers(nbuf, n)
	if err != nil {
		return bad(fmt.Errorf(`connect: "node" must be an object`))
	}
	n.what = "connect"
	n.prefix = "node."
	if p.Node.ID, _, err = n.str("id"); err != nil {
		return bad(err)
	}
	if p.Node.OS, _, err = n.strIn("os", knownNames); err != nil {
		return bad(err)
	}
	if p.Node.Roles, err = n.stringsIn("roles", knownNames); err != nil {
		return bad(err)
	}
	if p.Node.Capabilities, err = n.stringsIn("capabilities", knownNames); err != nil {
		return bad(err)
	}
	if err := p.Validate(); err != nil {
		return ConnectParams{}, err
	}
	return p, nil
}

// ParseFactsUpdate decodes and validates the params of req facts.update. A
// missing "env" or "hostBinStatus" counts as empty. The error is an *Error
// with CodeBadRequest for a malformed value and CodeInvalidFacts for one
// over the limits.
func ParseFactsUpdate(raw json.RawMessage) (FactsUpdate, error) {
	o, err := parseObject("facts.update", raw)
	if err != nil {
		return FactsUpdate{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	u := FactsUpdate{HostBinStatus: map[string]bool{}}
	if u.Env, err = o.strings("env"); err != nil {
		return FactsUpdate{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	if u.Env == nil {
		u.Env = []string{}
	}
	if r := o.raw("hostBinStatus"); r != nil {
		if r[0] != '{' || json.Unmarshal(r, &u.HostBinStatus) != nil {
			return FactsUpdate{}, errorf(CodeBadRequest, `facts.update: "hostBinStatus" must be an object of booleans`)
		}
	}
	if err := u.Validate(); err != nil {
		return FactsUpdate{}, err
	}
	return u, nil
}

// ParseInterest decodes the payload of evt interest (or the "interest" of a
// ConnectResult). Missing lists count as empty; the result's lists are never
// nil. The error is an *Error with CodeBadRequest.
func ParseInterest(raw json.RawMessage) (Interest, error) {
	o, err := parseObject("interest", raw)
	if err != nil {
		return Interest{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	var in Interest
	if in.Bins, err = o.strings("bins"); err != nil {
		return Interest{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	if in.Env, err = o.strings("env"); err != nil {
		return Interest{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	if in.Bins == nil {
		in.Bins = []string{}
	}
	if in.Env == nil {
		in.Env = []string{}
	}
	return in, nil
}

// ParseConnectResult decodes the payload of a successful connect res. The
// error is an *Error with CodeBadRequest, or CodeUnsupportedProtocol when the
// gateway answered with another version.
func ParseConnectResult(raw json.RawMessage) (ConnectResult, error) {
	o, err := parseObject("connect result", raw)
	if err != nil {
		return ConnectResult{}, &Error{Code: CodeBadRequest, Message: err.Error()}
	}
	var r ConnectResult
	if pr := o.raw("protocol"); pr == nil || json.Unmarshal(pr, &r.Protocol) != nil {
		return ConnectResult{}, errorf(CodeBadRequest, `connect result: "protocol" must be an integer`)
	}
	if r.Protocol != Version {
		return ConnectResult{}, unsupported(r.Protocol)
	}
	ir := o.raw("interest")
	if ir == nil {
		ir = json.RawMessage("{}")
	}
	if r.Interest, err = ParseInterest(ir); err != nil {
		return ConnectResult{}, err
	}
	return r, nil
}

// NewReq encodes a req frame. params is marshalled with encoding/json; nil
// leaves "params" out.
func NewReq(id, method string, params any) ([]byte, error) {
	p, err := marshalOptional(params)
	if err != nil {
		return nil, fmt.Errorf("req %s: params: %w", method, err)
	}
	return json.Marshal(Frame{Type: TypeReq, ID: id, Method: method, Params: p})
}

// NewRes encodes a successful res frame answering the req with this id. A nil
// payload leaves "payload" out.
func NewRes(id string, payload any) ([]byte, error) {
	p, err := marshalOptional(payload)
	if err != nil {
		return nil, fmt.Errorf("res %s: payload: %w", id, err)
	}
	ok := true
	return json.Marshal(Frame{Type: TypeRes, ID: id, OK: &ok, Payload: p})
}

// NewResRaw is NewRes for a payload already encoded by encoding/json
// (compact, HTML-escaped), which is written as it is: the gateway encodes
// the answer to connect once per interest, not once per node. The bytes
// are those NewRes would write.
func NewResRaw(id string, payload json.RawMessage) []byte {
	b := make([]byte, 0, len(`{"type":"res","id":"","ok":true,"payload":}`)+len(id)+len(payload))
	b = append(b, `{"type":"res","id":`...)
	b = appendQuoted(b, id)
	b = append(b, `,"ok":true,"payload":`...)
	b = append(b, payload...)
	return append(b, '}')
}

// NewResOK returns what NewRes(id, nil) returns, a res with ok true and
// no payload (the answer to every facts.update), without encoding/json's
// reflection.
func NewResOK(id string) []byte {
	if id == "" {
		b, _ := NewRes(id, nil) // "id" omitted
		return b
	}
	b := make([]byte, 0, len(`{"type":"res","id":"","ok":true}`)+len(id))
	b = append(b, `{"type":"res","id":`...)
	b = appendQuoted(b, id)
	return append(b, `,"ok":true}`...)
}

// appendQuoted appends s as encoding/json encodes a string: quoted as it
// is when it is printable ASCII that json escapes nothing of, else by
// encoding/json.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// NewErr encodes a failed res frame. id may be empty when the frame being
// answered had no readable id.
func NewErr(id, code, message string) []byte {
	ok := false
	b, err := json.Marshal(Frame{Type: TypeRes, ID: id, OK: &ok, Error: &Error{Code: code, Message: message}})
	if err != nil {
		// Strings and a bool always marshal; this is unreachable.
		panic(fmt.Sprintf("protocol: encoding an error frame: %v", err))
	}
	return b
}

// NewEvt encodes an evt frame. A nil payload leaves "payload" out.
func NewEvt(event string, payload any) ([]byte, error) {
	p, err := marshalOptional(payload)
	if err != nil {
		return nil, fmt.Errorf("evt %s: payload: %w", event, err)
	}
	return json.Marshal(Frame{Type: TypeEvt, Event: event, Payload: p})
}

func marshalOptional(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if r, ok := v.(json.RawMessage); ok {
		return r, nil
	}
	return json.Marshal(v)
}

// object is a JSON object split into its members, so that presence, exact key
// names and types can be checked with errors that name the field. The
// scanner splits the common shape without maps or reflection; anything
// else is split by encoding/json, with the same result.
type object struct {
	what    string // frame kind or structure, the error prefix
	prefix  string // prepended to key names in errors ("node.")
	members []jsonscan.Member
}

func parseObject(what string, data []byte) (object, error) {
	return parseObjectIn(make([]jsonscan.Member, 0, 8), what, data)
}

// memberBufs hold the members of the objects DecodeFrame and
// ParseConnectParams split: nothing they return refers to them, so a
// buffer goes back (cleared) when they return, instead of one allocated
// per object of every frame.
var memberBufs = sync.Pool{New: func() any { return new([]jsonscan.Member) }}

// getMembers takes a buffer from memberBufs; putMembers gives it back.
func getMembers() *[]jsonscan.Member { return memberBufs.Get().(*[]jsonscan.Member) }

func putMembers(b *[]jsonscan.Member, o object) {
	if cap(o.members) > cap(*b) && cap(o.members) <= 64 {
		*b = o.members // grown by a larger object: keep the larger one
	}
	clear((*b)[:cap(*b)]) // no frame bytes kept alive from the pool
	*b = (*b)[:0]
	memberBufs.Put(b)
}

// parseObjectIn is parseObject with the members appended to buf.
func parseObjectIn(buf []jsonscan.Member, what string, data []byte) (object, error) {
	data = bytes.Trim(data, " \t\r\n") // JSON's whitespace only, as encoding/json
	if len(data) == 0 || data[0] != '{' {
		return object{}, fmt.Errorf("%s: must be a JSON object", what)
	}
	if ms, ok := jsonscan.SplitObject(buf, data); ok {
		return object{what: what, members: ms}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return object{}, fmt.Errorf("%s: not valid JSON: %v", what, err)
	}
	ms := make([]jsonscan.Member, 0, len(m))
	for k, v := range m {
		ms = append(ms, jsonscan.Member{Key: []byte(k), Raw: v})
	}
	return object{what: what, members: ms}, nil
}

// raw returns the member's JSON text, or nil when it is absent or null. Of
// a repeated key the last counts, as with encoding/json.
func (o object) raw(key string) json.RawMessage {
	for i := len(o.members) - 1; i >= 0; i-- {
		if m := &o.members[i]; string(m.Key) == key {
			if string(m.Raw) == "null" {
				return nil
			}
			return m.Raw
		}
	}
	return nil
}

func (o object) forbid(keys ...string) error {
	for _, k := range keys {
		if o.raw(k) != nil {
			return fmt.Errorf("%s: %q is not allowed", o.what, o.prefix+k)
		}
	}
	return nil
}

// str returns a string member; present reports whether it was there.
func (o object) str(key string) (s string, present bool, err error) { return o.strIn(key, nil) }

// strIn is str that takes a value found in known (as a key) as known's
// string for it (see knownNames).
func (o object) strIn(key string, known map[string]string) (s string, present bool, err error) {
	r := o.raw(key)
	if r == nil {
		return "", false, nil
	}
	if len(r) >= 2 && r[0] == '"' && r[len(r)-1] == '"' {
		if k, ok := known[string(r[1:len(r)-1])]; ok {
			return k, true, nil
		}
	}
	if s, ok := jsonscan.PlainString(r); ok {
		return s, true, nil
	}
	if r[0] != '"' || json.Unmarshal(r, &s) != nil {
		return "", true, fmt.Errorf("%s: %q must be a string", o.what, o.prefix+key)
	}
	return s, true, nil
}

// name returns a required, non-empty string member of at most max bytes
// (one of knownFrameNames is that string).
func (o object) name(key string, max int) (string, error) {
	s, present, err := o.strIn(key, knownFrameNames)
	switch {
	case err != nil:
		return "", err
	case !present:
		return "", fmt.Errorf("%s: %q is missing", o.what, o.prefix+key)
	case s == "":
		return "", fmt.Errorf("%s: %q is empty", o.what, o.prefix+key)
	case len(s) > max:
		return "", fmt.Errorf("%s: %q is longer than %d bytes", o.what, o.prefix+key, max)
	}
	return s, nil
}

func (o object) boolean(key string) (b, present bool, err error) {
	r := o.raw(key)
	switch string(r) {
	case "":
		return false, false, nil
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	if json.Unmarshal(r, &b) != nil {
		return false, true, fmt.Errorf("%s: %q must be true or false", o.what, o.prefix+key)
	}
	return b, true, nil
}

// strings returns a list-of-strings member, nil when absent.
func (o object) strings(key string) ([]string, error) { return o.stringsIn(key, nil) }

// stringsIn is strings that takes a value found in known (as a key) as
// known's string for it (see knownNames).
func (o object) stringsIn(key string, known map[string]string) ([]string, error) {
	r := o.raw(key)
	if r == nil {
		return nil, nil
	}
	if l, ok := jsonscan.PlainStringsIn(r, known); ok {
		return l, nil
	}
	var l []string
	if r[0] != '[' || json.Unmarshal(r, &l) != nil {
		return nil, fmt.Errorf("%s: %q must be a list of strings", o.what, o.prefix+key)
	}
	if l == nil {
		l = []string{}
	}
	return l, nil
}
