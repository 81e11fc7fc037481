package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/protocol"
)

// Probe timing.
const (
	probeDeadline = 10 * time.Second       // for the skill to appear or go
	probePause    = 500 * time.Microsecond // between two prompt polls
)

// probeResult is what `nodes --probe-agent` measured.
type probeResult struct {
	Agent string `json:"agent"`
	Runs  int    `json:"runs"`
	// Appear is the time from sending connect to the first prompt build
	// that lists the probe skill.
	Appear latencyStats `json:"appear"`
	// Gone is the time from closing the probe node's socket to the first
	// prompt build without the probe skill.
	Gone latencyStats `json:"gone"`
}

// runProbe waits for the fleet to be up, then connects the probe node
// opt.probeRuns times and measures how long its skill takes to appear in
// (and leave) the agent's prompt. With several gateways, the probe node
// and the prompt fetches go to the first.
func (f *fleet) runProbe() error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for f.allUpNanos.Load() == 0 {
		select {
		case <-f.done:
			return fmt.Errorf("the probe did not run: the fleet was never fully connected (%d of %d nodes ready)", f.ready.Load(), f.opt.n)
		case <-tick.C:
		}
	}
	p := &prober{
		f:      f,
		url:    promptURL(f.opt.gateways[0].base, f.opt.probeAgent),
		marker: `<skill name="` + probeSkill + `">`,
		http:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 5 * time.Second},
		facts:  simNodeFacts{prof: probeProfile()},
		id:     f.opt.prefix + "probe",
	}
	present, err := p.has()
	if err != nil {
		return err
	}
	if present {
		return fmt.Errorf("probe: skill %s is already in agent %s's prompt before the probe node connected: some simulated node has %s (check --mix), or the store's %s skill does not require it",
			probeSkill, f.opt.probeAgent, probeBin, probeSkill)
	}
	var appear, gone []time.Duration
	for run := range f.opt.probeRuns {
		a, g, err := p.once()
		if err != nil {
			if f.stopping.Load() {
				return nil
			}
			return fmt.Errorf("probe run %d: %w", run+1, err)
		}
		appear, gone = append(appear, a), append(gone, g)
	}
	f.probe = &probeResult{Agent: f.opt.probeAgent, Runs: len(appear), Appear: summarize(appear), Gone: summarize(gone)}
	f.probeDone.Store(true)
	fmt.Fprintf(f.progress, "fleet: probe on agent %s, %d runs: connect → prompt %s; disconnect → gone %s\n",
		f.opt.probeAgent, len(appear), f.probe.Appear, f.probe.Gone)
	return nil
}

// prober runs the probe node.
type prober struct {
	f      *fleet
	url    string
	marker string
	http   *http.Client
	facts  simNodeFacts
	id     string
}

// has reports whether the agent's prompt lists the probe skill.
func (p *prober) has() (bool, error) {
	req, err := http.NewRequest(http.MethodGet, p.url, nil)
	if err != nil {
		return false, err
	}
	if p.f.opt.agentToken != "" {
		req.Header.Set("Authorization", "Bearer "+p.f.opt.agentToken)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("probe: GET %s: %w", p.url, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	if err != nil {
		return false, fmt.Errorf("probe: GET %s: %w", p.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = "; set " + agentTokenEnv + " or --agent-token-file to the gateway's agent token"
		}
		return false, fmt.Errorf("probe: GET %s: %s: %s%s", p.url, resp.Status, strings.TrimSpace(string(body)), hint)
	}
	return strings.Contains(string(body), p.marker), nil
}

// waitFor polls the prompt until the probe skill's presence is want.
func (p *prober) waitFor(want bool) error {
	deadline := time.Now().Add(probeDeadline)
	for {
		got, err := p.has()
		if err != nil {
			return err
		}
		if got == want {
			return nil
		}
		if p.f.stopping.Load() {
			return errors.New("the fleet is stopping")
		}
		if time.Now().After(deadline) {
			if want {
				return fmt.Errorf("skill %s did not appear in agent %s's prompt within %v of the probe node's connect; generate the store with `skillgate-fleet skills --probe`",
					probeSkill, p.f.opt.probeAgent, probeDeadline)
			}
			return fmt.Errorf("skill %s was still in agent %s's prompt %v after the probe node disconnected", probeSkill, p.f.opt.probeAgent, probeDeadline)
		}
		time.Sleep(probePause)
	}
}

// once connects the probe node, waits for its skill, disconnects it and
// waits for the skill to go.
func (p *prober) once() (appear, gone time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	t0 := time.Now()
	node, in, err := p.f.dialProbeNode(ctx, p.id, p.f.opt.token, p.facts)
	if err != nil {
		return 0, 0, err
	}
	if err := node.sendFacts(in); err != nil {
		node.close("probe done")
		return 0, 0, fmt.Errorf("probe node: sending facts.update: %w", err)
	}
	if err := p.waitFor(true); err != nil {
		node.close("probe done")
		return 0, 0, err
	}
	appear = time.Since(t0)
	t1 := time.Now()
	node.close("probe done")
	if err := p.waitFor(false); err != nil {
		return 0, 0, err
	}
	return appear, time.Since(t1), nil
}

// probeNode is a probe node (`nodes --probe-agent`, `longpoll`): a
// hand-driven node whose read loop answers interest events.
type probeNode struct {
	conn     *websocket.Conn
	facts    simNodeFacts
	mu       sync.Mutex // nextID and writes
	nextID   int
	readDone chan struct{}
	closed   bool
}

// dialProbeNode dials a probe node of id with these facts to the first
// gateway and sends connect; it returns the interest of the connect
// answer, which the node's first facts.update answers. Its read loop
// answers interest events until close.
func (f *fleet) dialProbeNode(ctx context.Context, id, token string, facts simNodeFacts) (*probeNode, protocol.Interest, error) {
	var in protocol.Interest
	conn, _, err := websocket.Dial(ctx, f.opt.gateways[0].wsURL, &websocket.DialOptions{
		HTTPClient: f.clients[0], HTTPHeader: f.header, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, in, fmt.Errorf("dialing the probe node: %w", err)
	}
	conn.SetReadLimit(protocol.ReadLimit)
	p := &probeNode{conn: conn, facts: facts, nextID: 2, readDone: make(chan struct{})}
	req, err := protocol.NewReq("1", protocol.MethodConnect, protocol.ConnectParams{
		Protocol: protocol.Version, Token: token, Client: clientName, Node: facts.info(id),
	})
	if err == nil {
		err = conn.Write(ctx, websocket.MessageText, req)
	}
	if err != nil {
		conn.CloseNow()
		return nil, in, fmt.Errorf("probe node: sending connect: %w", err)
	}
	in, _, ok := f.awaitConnect(ctx, conn, id)
	if !ok {
		conn.CloseNow()
		f.fatalMu.Lock()
		why := f.fatal
		f.fatalMu.Unlock()
		if why == nil {
			why = errors.New(f.errs.first())
		}
		return nil, in, fmt.Errorf("probe node: connect failed: %w", why)
	}
	go func() {
		defer close(p.readDone)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			fr, err := protocol.DecodeFrame(data)
			if err != nil || fr.Type != protocol.TypeEvt || fr.Event != protocol.EventInterest {
				continue
			}
			if in, err := protocol.ParseInterest(fr.Payload); err == nil {
				p.sendFacts(in)
			}
		}
	}()
	return p, in, nil
}

// sendFacts sends the probe node's facts.update for interest in.
func (p *probeNode) sendFacts(in protocol.Interest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, err := protocol.NewReq(fmt.Sprint(p.nextID), protocol.MethodFactsUpdate, p.facts.answer(in))
	if err != nil {
		return err
	}
	p.nextID++
	wctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	return p.conn.Write(wctx, websocket.MessageText, b)
}

// close closes the probe node's socket with 1001 (once) and waits for its
// read loop.
func (p *probeNode) close(reason string) {
	if p.closed {
		return
	}
	p.closed = true
	p.conn.Close(websocket.StatusGoingAway, reason)
	<-p.readDone
}

// promptURL returns {base}/v1/agents/{id}/prompt.
func promptURL(base *url.URL, agent string) string {
	return base.JoinPath("v1", "agents", agent, "prompt").String()
}
