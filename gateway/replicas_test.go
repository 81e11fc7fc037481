package gateway_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/node"
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

	n := startNode(t, strings.Join([]string{dead, a.URL, b.URL}, ","), "n1", testkit.BinDir(t, "the-tool"), nil)
	eTool := global("tool", "Needs the-tool.")
	// It ends up on a or b, whichever comes first from where it started.
	testkit.Eventually(t, waitFor, func() (string, bool) {
		pa, pb := a.Prompt(t, "main"), b.Prompt(t, "main")
		return "a: " + pa + "\nb: " + pb, (pa == block(eTool)) != (pb == block(eTool))
	})
	on, other := a, b
	if a.Prompt(t, "main") != block(eTool) {
		on, other = b, a
	}
	on.Stop() // that replica goes: the node moves on, past the dead URL if need be
	other.waitPrompt(t, "main", block(eTool))
	if out := n.Output(); !strings.Contains(out, `"next_gateway"`) {
		t.Errorf("the node's log does not name the next gateway:\n%s", testkit.Tail(out, 4<<10))
	}
}

// TestNodePassesARefusingReplica: a replica that refuses the node for good
// (here: it wants a token the node does not have) sends it on to the next
// replica instead of ending it; with one URL the same refusal ends it.
func TestNodePassesARefusingReplica(t *testing.T) {
	files := map[string]string{"skills/tool/SKILL.md": skillMD("tool", "Needs the-tool.", `{"bins": ["the-tool"]}`)}
	refusing := startGateway(t, gwOptions{files: files, nodeToken: "a-token-the-node-lacks"})
	open := startGateway(t, gwOptions{files: files})
	dir := testkit.BinDir(t, "the-tool")
	// An id whose node tries the refusing replica first (node.ReplicaOrder
	// of the URLs as the node makes them), so that it meets the refusal.
	urls, err := node.Config{Gateway: refusing.URL + "," + open.URL}.Gateways()
	if err != nil {
		t.Fatal(err)
	}
	id := "n1"
	for i := 0; node.ReplicaOrder(id, urls)[0] != urls[0]; i++ {
		id = fmt.Sprintf("n1-%d", i)
	}
	n := startNode(t, strings.Join([]string{refusing.URL, open.URL}, ","), id, dir, nil)
	open.waitPrompt(t, "main", block(global("tool", "Needs the-tool.")))
	if out := n.Output(); !strings.Contains(out, "trying the next replica") {
		t.Errorf("the node did not meet the refusing replica first:\n%s", testkit.Tail(out, 4<<10))
	}
	select {
	case <-n.Exited():
		t.Errorf("the node ended:\n%s", testkit.Tail(n.Output(), 4<<10))
	default:
	}
	alone := startNode(t, refusing.URL, "n2", dir, nil)
	if code := alone.Wait(t, waitFor); code != 1 {
		t.Errorf("a node whose only gateway refuses it exited %d, want 1", code)
	}
}
