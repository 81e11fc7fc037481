package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/protocol"
)

// rawWait bounds each step of a RawNode (dial, write, the wait for a res
// or a close).
const rawWait = 10 * time.Second

// RawNode is a hand-driven node connection to a gateway, speaking the
// node protocol frame by frame: for sending what a real node never would,
// and checking exactly what the gateway answers.
type RawNode struct {
	Conn *websocket.Conn
	t    testing.TB
}

// DialNode connects a raw node to the gateway's node endpoint wsURL
// (ws://…/v1/nodes/connect); the connection closes when t ends.
func DialNode(t testing.TB, wsURL string) *RawNode {
	t.Helper()
	return DialNodeWith(t, wsURL, nil)
}

// DialNodeWith is DialNode with the WebSocket library's dial options (to
// watch the gateway's pings, say).
func DialNodeWith(t testing.TB, wsURL string, opts *websocket.DialOptions) *RawNode {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rawWait)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", wsURL, err)
	}
	c.SetReadLimit(protocol.ReadLimit)
	t.Cleanup(func() { c.CloseNow() })
	return &RawNode{t: t, Conn: c}
}

// Send writes one frame of type typ.
func (r *RawNode) Send(typ websocket.MessageType, data []byte) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rawWait)
	defer cancel()
	if err := r.Conn.Write(ctx, typ, data); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// SendText writes one text frame.
func (r *RawNode) SendText(s string) { r.t.Helper(); r.Send(websocket.MessageText, []byte(s)) }

// Next reads the next frame the gateway sends, checked with
// protocol.DecodeFrame. err is the read error (a close, typically).
func (r *RawNode) Next(timeout time.Duration) (protocol.Frame, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	typ, data, err := r.Conn.Read(ctx)
	if err != nil {
		return protocol.Frame{}, err
	}
	if typ != websocket.MessageText {
		r.t.Fatalf("gateway sent a binary frame: %q", data)
	}
	f, err := protocol.DecodeFrame(data)
	if err != nil {
		r.t.Fatalf("gateway sent a frame that does not decode: %v\n%s", err, data)
	}
	return f, nil
}

// Res reads frames until a res (events are skipped) and returns it.
func (r *RawNode) Res() protocol.Frame {
	r.t.Helper()
	for {
		f, err := r.Next(rawWait)
		if err != nil {
			r.t.Fatalf("waiting for a res: %v", err)
		}
		if f.Type == protocol.TypeRes {
			return f
		}
	}
}

// ExpectErr reads the next res and checks it is an error with this id and
// code.
func (r *RawNode) ExpectErr(id, code string) protocol.Frame {
	r.t.Helper()
	f := r.Res()
	if *f.OK || f.Error == nil || f.Error.Code != code || f.ID != id {
		r.t.Fatalf("got res %+v (error %+v), want ok:false id %q code %q", f, f.Error, id, code)
	}
	if f.Error.Message == "" {
		r.t.Errorf("error %s has no message", code)
	}
	return f
}

// ExpectOK reads the next res and checks it is ok:true with this id.
func (r *RawNode) ExpectOK(id string) protocol.Frame {
	r.t.Helper()
	f := r.Res()
	if !*f.OK || f.ID != id {
		r.t.Fatalf("got res %+v (error %+v), want ok:true id %q", f, f.Error, id)
	}
	return f
}

// ExpectClose reads until the connection ends and checks the close status
// (and the reason, when reason is not empty). Events are skipped; a res is
// an error.
func (r *RawNode) ExpectClose(code websocket.StatusCode, reason string) {
	r.t.Helper()
	for {
		f, err := r.Next(rawWait)
		if err == nil {
			if f.Type == protocol.TypeRes {
				r.t.Fatalf("got res %+v (error %+v), want the socket closed with %d", f, f.Error, code)
			}
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			r.t.Fatalf("connection ended with %v, want a close frame with status %d", err, code)
		}
		if ce.Code != code {
			r.t.Fatalf("closed with %d %q, want %d", ce.Code, ce.Reason, code)
		}
		if reason != "" && ce.Reason != reason {
			r.t.Fatalf("closed with %d reason %q, want reason %q", ce.Code, ce.Reason, reason)
		}
		return
	}
}

// ConnectFrame is a req connect of a linux host. An empty token leaves
// "token" out.
func ConnectFrame(reqID, nodeID, token string, proto int, roles, caps []string) string {
	return connectFrame(reqID, token, proto, protocol.HostFacts{ID: nodeID, OS: "linux", Roles: roles, Capabilities: caps})
}

// connectFrame is a req connect of the host h (its id, os, roles and
// capabilities).
func connectFrame(reqID, token string, proto int, h protocol.HostFacts) string {
	params := map[string]any{
		"protocol": proto,
		"client":   "e2e-raw/1",
		"node":     map[string]any{"id": h.ID, "os": h.OS, "roles": h.Roles, "capabilities": h.Capabilities},
	}
	if token != "" {
		params["token"] = token
	}
	b, err := json.Marshal(map[string]any{"type": "req", "id": reqID, "method": "connect", "params": params})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Connect sends a valid connect for nodeID and expects ok:true; it returns
// the interest the gateway answered with.
func (r *RawNode) Connect(nodeID, token string) protocol.Interest {
	r.t.Helper()
	r.SendText(ConnectFrame("c1", nodeID, token, protocol.Version, []string{"execution"}, protocol.BaselineCapabilities))
	f := r.ExpectOK("c1")
	res, err := protocol.ParseConnectResult(f.Payload)
	if err != nil {
		r.t.Fatalf("connect result: %v", err)
	}
	return res.Interest
}

// FactsFrame is a req facts.update.
func FactsFrame(reqID string, env []string, bins map[string]bool) string {
	if env == nil {
		env = []string{}
	}
	if bins == nil {
		bins = map[string]bool{}
	}
	b, err := json.Marshal(map[string]any{"type": "req", "id": reqID, "method": "facts.update",
		"params": map[string]any{"env": env, "hostBinStatus": bins}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Facts sends a facts.update and expects ok:true.
func (r *RawNode) Facts(reqID string, env []string, bins map[string]bool) {
	r.t.Helper()
	r.SendText(FactsFrame(reqID, env, bins))
	r.ExpectOK(reqID)
}

// ConnectAs sends the connect of the host h (its id, os, roles and
// capabilities) and expects ok:true; it returns the interest the gateway
// answered with.
func (r *RawNode) ConnectAs(h protocol.HostFacts) protocol.Interest {
	r.t.Helper()
	r.SendText(connectFrame("1", "", protocol.Version, h))
	res, err := protocol.ParseConnectResult(r.ExpectOK("1").Payload)
	if err != nil {
		r.t.Fatalf("connect result: %v", err)
	}
	return res.Interest
}

// Host connects as the host h describes and reports its env and
// binaries, expecting ok:true to both: a node that has what h says.
func (r *RawNode) Host(h protocol.HostFacts) {
	r.t.Helper()
	r.ConnectAs(h)
	r.Facts("2", h.Env, h.HostBinStatus)
}
