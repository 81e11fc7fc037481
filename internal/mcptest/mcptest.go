// Package mcptest runs the official MCP TypeScript SDK's client
// (testdata/mcp/client.mjs, with node) for the MCP tests of the gateway
// (over Streamable HTTP) and of `skillgate mcp` (over stdio), and judges
// the scenario they share. The SDK is installed by scripts/test-tools.sh
// (make test-tools): a missing one fails the test, never skips it.
package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/syncbuf"
)

// Script is the path of client.mjs.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mcp", "client.mjs")
}

// Steps are the steps the script wrote, by name.
type Steps map[string]map[string]any

// Client is a running client.mjs.
type Client struct {
	t     *testing.T
	steps chan map[string]any
	wait  func() error
}

// Start runs client.mjs with cfg (see the script's comment).
func Start(t *testing.T, cfg map[string]any) *Client {
	t.Helper()
	nodeExe, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run the MCP TypeScript SDK client: %v (install Node.js, then make test-tools)", err)
	}
	script := Script()
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the MCP TypeScript SDK is not installed in %s: run make test-tools (scripts/test-tools.sh): %v", filepath.Dir(script), err)
	}
	arg, _ := json.Marshal(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, nodeExe, script, string(arg))
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &Client{t: t, steps: make(chan map[string]any, 64)}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(c.steps)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"step": "fatal", "error": "client script wrote " + sc.Text()}
			}
			c.steps <- m
		}
	})
	var once sync.Once
	var werr error
	c.wait = func() error {
		once.Do(func() { wg.Wait(); werr = cmd.Wait() })
		return werr
	}
	t.Cleanup(func() {
		cancel()
		c.wait()
		if t.Failed() {
			out := stderr.String()
			if len(out) > 8<<10 {
				out = "…" + out[len(out)-8<<10:]
			}
			t.Logf("client.mjs stderr:\n%s", out)
		}
	})
	return c
}

// Until returns the steps up to and including until (or to the end).
func (c *Client) Until(until string) Steps {
	c.t.Helper()
	got := Steps{}
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case m, ok := <-c.steps:
			if !ok {
				return got
			}
			step, _ := m["step"].(string)
			if step == "fatal" {
				c.t.Fatalf("client.mjs failed: %v", m["error"])
			}
			got[step] = m
			if step == until {
				return got
			}
		case <-timeout:
			c.t.Fatalf("client.mjs: no step %q within 2 minutes; got %v", until, got)
		}
	}
}

// Wait waits for the script to exit.
func (c *Client) Wait() error { return c.wait() }

// Path returns the value at a dotted path of decoded JSON (numbers index
// arrays), nil when there is none.
func Path(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		case Steps:
			v = x[k]
		default:
			return nil
		}
	}
	return v
}

// Scenario is the client.mjs configuration that Check judges, on the
// fixture the MCP tests share: agent main may use notes (no requirements,
// with scripts/run.sh) and github (needs the binary gh) but not tool (held
// by governance), hidden (out of its scope), secret (agent other's) nor
// nosuch. The caller adds the transport.
func Scenario() map[string]any {
	return map[string]any{
		"search": "markdown notes", "load": "notes", "file": map[string]any{"name": "notes", "path": "scripts/run.sh"},
		"unavailable":   Unavailable,
		"resource":      "skill://main/skills/notes/SKILL.md",
		"otherResource": "skill://other/skills/secret/SKILL.md",
		"waitChange":    true,
	}
}

// Unavailable are the fixture's skills agent main may not use.
var Unavailable = []string{"github", "tool", "hidden", "secret", "nosuch"}

// Check judges the steps of Scenario up to "ready" (before any host
// connects): readMD and readScript are what GET …/read serves for notes'
// SKILL.md and scripts/run.sh, block the agent's prompt block.
func Check(t *testing.T, got Steps, readMD, readScript, block string) {
	t.Helper()
	expect := func(step, path string, want any) {
		t.Helper()
		if v := Path(got[step], path); fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("%s: %s = %v, want %v (step: %v)", step, path, v, want, got[step])
		}
	}
	expect("initialize", "capabilities.resources.listChanged", true)
	var tools []string
	ts, _ := Path(got["tools/list"], "result.tools").([]any)
	for _, tl := range ts {
		tools = append(tools, fmt.Sprint(Path(tl, "name")))
	}
	slices.Sort(tools)
	if strings.Join(tools, ",") != "list_skills,load_skill,read_skill_file,search_skills" {
		t.Errorf("tools/list: %v", got["tools/list"])
	}
	expect("list_skills", "result.structuredContent.skills.0.name", "notes")
	expect("list_skills", "result.structuredContent.skills.0.read_path", "skills/notes/SKILL.md")
	expect("list_skills", "result.structuredContent.skills.1", nil)
	expect("search_skills", "result.structuredContent.skills.0.name", "notes")
	if s, ok := Path(got["search_skills"], "result.structuredContent.skills.0.score").(float64); !ok || s <= 0 {
		t.Errorf("search_skills: %v, want notes with a score", got["search_skills"])
	}
	expect("load_skill", "result.structuredContent.text", readMD)
	expect("load_skill", "result.content.0.text", readMD)
	expect("read_skill_file", "result.structuredContent.text", readScript)
	for _, name := range Unavailable {
		expect("unavailable:"+name, "result.isError", true)
		expect("unavailable:"+name, "result.content.0.text", "skill "+name+" is not available to agent main")
	}
	expect("resources/list", "result.resources.0.uri", "skill://main/skills/notes/SKILL.md")
	expect("resources/list", "result.resources.0.mimeType", "text/markdown")
	expect("resources/list", "result.resources.1", nil)
	expect("resources/read", "result.contents.0.text", readMD)
	if msg, _ := Path(got["resources/read:other"], "error.message").(string); !strings.Contains(msg, "skill secret is not available to agent main") {
		t.Errorf("resources/read of other's skill: %v, want an error saying it is not available", got["resources/read:other"])
	}
	expect("prompts/list", "result.prompts.0.name", "available_skills")
	expect("prompts/get", "result.messages.0.role", "user")
	expect("prompts/get", "result.messages.0.content.text", block)
}

// CheckChanged judges the steps after "ready", once a node with gh
// connected: list_changed received, and github listed then.
func CheckChanged(t *testing.T, got Steps) {
	t.Helper()
	if r := got["list_changed"]; r["received"] != true {
		t.Errorf("list_changed: %v, want received", r)
	}
	var names []string
	skills, _ := Path(got["list_skills:after"], "result.structuredContent.skills").([]any)
	for _, s := range skills {
		names = append(names, fmt.Sprint(Path(s, "name")))
	}
	if strings.Join(names, ",") != "github,notes" {
		t.Errorf("list_skills after the node: %v, want github,notes", got["list_skills:after"])
	}
	if n := Path(got["list_skills:after"], "result.structuredContent.skills.0.hosts.count"); fmt.Sprint(n) != "1" {
		t.Errorf("github's hosts after the node: %v, want count 1", Path(got["list_skills:after"], "result.structuredContent.skills.0.hosts"))
	}
	if r := Path(got["resources/list:after"], "result.resources.1.uri"); r != "skill://main/skills/notes/SKILL.md" {
		t.Errorf("resources/list after the node: %v", got["resources/list:after"])
	}
	if got["done"] == nil {
		t.Errorf("client.mjs did not end its scenario: %v", got)
	}
}
