package gateway_test

import (
	"net"
	"strings"
	"testing"
)

// TestNodeMovesToTheNextGateway: a node given several gateway URLs (the
// replicas of a gateway) connects to one; when that one is gone it moves
// on to the next, with the usual backoff.
func TestNodeMovesToTheNextGateway(t *testing.T) {
	files := map[string]string{"skills/tool/SKILL.md": skillMD("tool", "Needs the-tool.", `{"bins": ["the-tool"]}`)}
	a := startGateway(t, gwOptions{files: files})
	b := startGateway(t, gwOptions{files: files})
	// A third URL nobody listens on: a replica that is down.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	node := startNode(t, strings.Join([]string{dead, a.base, b.base}, ","), "n1", binDir(t, "the-tool"), nil)
	eTool := global("tool", "Needs the-tool.")
	// It ends up on a or b, whichever comes first from where it started.
	eventually(t, waitFor, func() (string, bool) {
		pa, pb := a.prompt(t, "main"), b.prompt(t, "main")
		return "a: " + pa + "\nb: " + pb, (pa == block(eTool)) != (pb == block(eTool))
	})
	on, other := a, b
	if a.prompt(t, "main") != block(eTool) {
		on, other = b, a
	}
	on.stop() // that replica goes: the node moves on, past the dead URL if need be
	other.waitPrompt(t, "main", block(eTool))
	if out := node.out.String(); !strings.Contains(out, `"next_gateway"`) {
		t.Errorf("the node's log does not name the next gateway:\n%s", tail(out, 4<<10))
	}
}
