package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/node"
	"github.com/skillgate/skillgate/protocol"
)

// Timing of one simulated node's connection. Reconnects wait as the node
// agent's do (node.Backoff, from node.BackoffMin to node.BackoffMax).
const (
	handshakeTimeout = 10 * time.Second // dial + answer to connect
	writeTimeout     = 10 * time.Second
)

// simNode is the whole per-node state the fleet keeps; the rest lives on
// the node's goroutine while it runs.
type simNode struct {
	idx    int32
	ready  atomic.Bool // connected and facts sent on the current connection
	churn  atomic.Bool // the churner closed the connection: reconnect at once
	everUp atomic.Bool // connected at least once, for the per-gateway count
	conn   atomic.Pointer[websocket.Conn]
}

// connEnd says why one connection of a simulated node ended, and so what
// the node does next.
type connEnd int

const (
	endStop  connEnd = iota // the fleet is stopping
	endChurn                // closed by the churner: reconnect now
	endRetry                // an error: reconnect after a backoff
	endGone                 // this node stops (refused for good, or replaced)
)

// runNode is a node's only goroutine: it connects, answers the gateway
// from its read loop, and reconnects after churn or errors.
func (f *fleet) runNode(n *simNode) {
	defer f.wg.Done()
	facts := f.opt.mix.node(int(n.idx))
	id := f.opt.prefix + strconv.Itoa(int(n.idx))
	client := f.clients[int(n.idx)%len(f.clients)]
	gw := f.opt.gatewayOf(int(n.idx))
	// The node agent's schedule, so that a simulated fleet that lost its
	// gateway comes back as a real one would.
	b := node.Backoff{Min: node.BackoffMin, Max: node.BackoffMax}
	for {
		end := f.runConnection(n, &facts, id, client, gw)
		switch end {
		case endStop, endGone:
			return
		case endChurn:
			b.Reset()
			f.churnReconnects.Add(1)
		case endRetry:
			t := time.NewTimer(b.Next())
			select {
			case <-f.done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if !f.pace.wait(f.done) {
			return
		}
	}
}

// runConnection runs one connection of a node, from the dial to its end:
// handshake, the first facts.update, then the read loop that answers
// interest events.
func (f *fleet) runConnection(n *simNode, facts *simNodeFacts, id string, client *http.Client, gw *gatewayTarget) connEnd {
	select {
	case f.sem <- struct{}{}:
	case <-f.done:
		return endStop
	}
	inFlight := true
	release := func() {
		if inFlight {
			inFlight = false
			<-f.sem
		}
	}
	defer release()

	t0 := time.Now()
	f.dials.Add(1)
	hctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(hctx, gw.wsURL, &websocket.DialOptions{
		HTTPClient: client, HTTPHeader: f.header, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if f.stopping.Load() {
			return endStop
		}
		if resp != nil { // the gateway answered, but not with an upgrade
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			f.errs.add("upgrade", fmt.Sprintf("gateway answered the WebSocket upgrade with %s: %s", resp.Status, strings.TrimSpace(string(body))))
		} else {
			f.errs.add("dial", fmt.Sprintf("%v (is a gateway serving %s?)", err, gw.base))
		}
		return endRetry
	}
	conn.SetReadLimit(protocol.ReadLimit)
	n.conn.Store(conn)
	connected, ready := false, false
	defer func() {
		n.conn.Store(nil)
		if ready {
			n.ready.Store(false)
			f.ready.Add(-1)
		}
		if connected {
			f.connected.Add(-1)
		}
		conn.CloseNow()
	}()
	if f.stopping.Load() { // stop() may have passed this node already
		conn.Close(websocket.StatusGoingAway, "fleet stopping")
		return endStop
	}

	info := facts.info(id)
	req, err := protocol.NewReq("1", protocol.MethodConnect, protocol.ConnectParams{
		Protocol: protocol.Version, Token: f.opt.token, Client: clientName, Node: info,
	})
	if err != nil { // a NodeInfo always encodes
		f.abort(fmt.Errorf("encoding connect: %w", err))
		return endStop
	}
	if err := conn.Write(hctx, websocket.MessageText, req); err != nil {
		return f.ended(n, "handshake", err)
	}
	interest, end, ok := f.awaitConnect(hctx, conn, id)
	if !ok {
		return end
	}
	connected = true
	n.everUp.Store(true)
	f.connected.Add(1)
	f.connects.Add(1)
	f.recordConnect(time.Since(t0))
	release()
	cancel()

	nextID := 2
	sendFacts := func(in protocol.Interest) error {
		b := facts.appendFactsReq(nil, strconv.Itoa(nextID), in)
		nextID++
		wctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		if err := conn.Write(wctx, websocket.MessageText, b); err != nil {
			return err
		}
		f.factsSent.Add(1)
		return nil
	}
	if err := sendFacts(interest); err != nil {
		return f.ended(n, "write", err)
	}
	ready = true
	n.ready.Store(true)
	if f.ready.Add(1) == int64(f.opt.n) {
		f.allUpNanos.CompareAndSwap(0, int64(time.Since(f.start)))
	}

	for {
		// No deadline: the gateway's pings and the close handshake are
		// answered inside Read, and stop() or the churner end it with Close.
		typ, data, err := conn.Read(context.Background())
		if err != nil {
			return f.ended(n, "disconnected", err)
		}
		if typ != websocket.MessageText {
			f.errs.add("protocol", "the gateway sent a binary frame")
			continue
		}
		fr, err := protocol.DecodeFrame(data)
		if err != nil {
			f.errs.add("protocol", "malformed frame from the gateway: "+err.Error())
			continue
		}
		switch {
		case fr.Type == protocol.TypeEvt && fr.Event == protocol.EventInterest:
			in, err := f.interests.parse(fr.Payload, protocol.ParseInterest)
			if err != nil {
				f.errs.add("protocol", "malformed interest event: "+err.Error())
				continue
			}
			f.interestEvts.Add(1)
			if err := sendFacts(in); err != nil {
				return f.ended(n, "write", err)
			}
		case fr.Type == protocol.TypeRes && *fr.OK:
			f.factsAcked.Add(1)
		case fr.Type == protocol.TypeRes:
			f.errs.add("facts.update", fmt.Sprintf("gateway answered %s: %s (node %s)", fr.Error.Code, fr.Error.Message, id))
		default:
			f.errs.add("protocol", fmt.Sprintf("unexpected %s frame from the gateway (event %q, method %q)", fr.Type, fr.Event, fr.Method))
		}
	}
}

// awaitConnect reads until the answer to connect and returns the interest
// in it; ok is false when the connection ended (end says how).
func (f *fleet) awaitConnect(ctx context.Context, conn *websocket.Conn, id string) (in protocol.Interest, end connEnd, ok bool) {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return in, f.ended(nil, "handshake", err), false
		}
		if typ != websocket.MessageText {
			continue
		}
		fr, err := protocol.DecodeFrame(data)
		if err != nil || fr.Type != protocol.TypeRes || fr.ID != "1" {
			continue // nothing else is expected before the answer
		}
		if !*fr.OK {
			// A code that refuses a node for good ends the run, as it
			// stops a node; the hint says what to change.
			if code := fr.Error.Code; protocol.IsFatalCode(code) {
				hint := "fix the profile in --mix"
				if code == protocol.CodeUnauthorized {
					hint = "set " + nodeTokenEnv + " or --token-file to the gateway's node token"
				}
				f.abort(fmt.Errorf("gateway refused node %s (%s): %s; %s", id, code, fr.Error.Message, hint))
				return in, endGone, false
			}
			f.errs.add("connect", fmt.Sprintf("gateway refused connect of %s (%s): %s", id, fr.Error.Code, fr.Error.Message))
			return in, endRetry, false
		}
		in, err := f.connectResults.parse(fr.Payload, func(raw json.RawMessage) (protocol.Interest, error) {
			cr, err := protocol.ParseConnectResult(raw)
			return cr.Interest, err
		})
		if err != nil {
			f.errs.add("connect", "malformed connect answer: "+err.Error())
			return in, endRetry, false
		}
		return in, 0, true
	}
}

// ended classifies the end of a connection. n is nil during the handshake.
func (f *fleet) ended(n *simNode, kind string, err error) connEnd {
	if n != nil && n.churn.Swap(false) {
		return endChurn
	}
	if f.stopping.Load() {
		return endStop
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code == protocol.ClosePolicyViolation && ce.Reason == protocol.CloseReasonReplaced {
		f.errs.add("replaced", "the gateway replaced a node with a newer connection of the same id; is another fleet using --id-prefix "+strconv.Quote(f.opt.prefix)+"? Use a different prefix")
		return endGone
	}
	f.errs.add(kind, err.Error())
	return endRetry
}

func (f *fleet) recordConnect(d time.Duration) {
	f.connLatMu.Lock()
	if len(f.connLat) < maxLatencySample {
		f.connLat = append(f.connLat, d)
	}
	f.connLatMu.Unlock()
}

// interestCache remembers the last parsed interest: every node gets the
// same one, so parsing (and holding) it once instead of once per node
// keeps the simulator's CPU and memory out of the measurement. The parsed
// lists are shared and must be treated as read-only.
type interestCache struct {
	last atomic.Pointer[parsedInterest]
}

type parsedInterest struct {
	raw string
	in  protocol.Interest
}

// parse returns the interest of raw, calling parse only when raw differs
// from the last payload seen.
func (c *interestCache) parse(raw json.RawMessage, parse func(json.RawMessage) (protocol.Interest, error)) (protocol.Interest, error) {
	if p := c.last.Load(); p != nil && p.raw == string(raw) {
		return p.in, nil
	}
	in, err := parse(raw)
	if err != nil {
		return in, err
	}
	c.last.Store(&parsedInterest{raw: string(raw), in: in})
	return in, nil
}
