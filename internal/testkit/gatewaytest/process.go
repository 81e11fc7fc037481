package gatewaytest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit"
)

// ProcessOptions say how StartProcess runs `skillgate serve`.
type ProcessOptions struct {
	Name   string        // in messages; "": "skillgate serve"
	Store  string        // --store
	Config string        // --config; "": none
	Port   int           // the 127.0.0.1 port of --listen; 0: a free one
	Poll   time.Duration // --poll; 0: 100ms
	// Args are appended to the command line ("--cluster", URL, "--replica", "a").
	Args []string
	// Env is added to the environment the process inherits, in which the
	// token and cluster-secret variables are emptied first (a variable
	// given twice takes the value given last).
	Env []string
	// Ready, when not empty, is a text the body of /readyz must hold too
	// (`"cluster":"ok"`).
	Ready string
	// ReadyWithin bounds the wait for readiness; 0: 30 s.
	ReadyWithin time.Duration
}

// Process is a `skillgate serve` process (the binary testkit.Binaries
// builds), as operators run it.
type Process struct {
	*testkit.Proc
	URL string // http://127.0.0.1:PORT
}

// StartProcess runs `skillgate serve` as o says, killed when t ends, and
// returns once /readyz answers 200 (with o.Ready in its body); the process
// exiting before fails t at once. A port it chose itself (o.Port 0) that
// another test took between its choice and the process's listen is chosen
// again, up to five times (the process exits saying "address already in
// use"): packages' tests run in parallel.
func StartProcess(t testing.TB, o ProcessOptions) *Process {
	t.Helper()
	if o.Name == "" {
		o.Name = "skillgate serve"
	}
	if o.Poll == 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.ReadyWithin == 0 {
		o.ReadyWithin = 30 * time.Second
	}
	chosen := o.Port == 0
	for attempt := 1; ; attempt++ {
		port := o.Port
		if chosen {
			port = freePort(t)
		}
		p, last := startServe(t, o, port)
		if !p.Done() {
			return p
		}
		if chosen && attempt < 5 && strings.Contains(p.Output(), "address already in use") {
			t.Logf("%s: port %d was taken before it listened; another port", o.Name, port)
			continue
		}
		t.Fatalf("%s exited; last: %s", p.Name, last)
	}
}

// freePort chooses StartProcess's port (a variable for the kit's own test).
var freePort = testkit.FreePort

// startServe starts `skillgate serve` on port and waits until /readyz
// answers as StartProcess wants, or the process exits (then the caller
// looks at why); it returns the process and the last answer.
func startServe(t testing.TB, o ProcessOptions, port int) (*Process, string) {
	t.Helper()
	args := []string{"serve", "--store", o.Store}
	if o.Config != "" {
		args = append(args, "--config", o.Config)
	}
	args = append(args, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--poll", o.Poll.String())
	p := &Process{
		Proc: StartCommand(t, o.Name, o.Env, testkit.Binary(t, "cmd/skillgate"), append(args, o.Args...)...),
		URL:  "http://127.0.0.1:" + strconv.Itoa(port),
	}
	last := "no answer yet"
	testkit.Eventually(t, o.ReadyWithin, func() (string, bool) {
		if p.Done() {
			return last, true
		}
		code, body := HTTPGet(p.URL + "/readyz")
		last = fmt.Sprint(code, " ", body)
		return last, code == http.StatusOK && strings.Contains(body, o.Ready) && !p.Done()
	})
	return p, last
}

// StartCommand runs bin with args for t (testkit.StartProc) in the
// environment of StartProcess: the test's, with the token and
// cluster-secret variables emptied and env added.
func StartCommand(t testing.TB, name string, env []string, bin string, args ...string) *testkit.Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "SKILLGATE_NODE_TOKEN=", "SKILLGATE_AGENT_TOKEN=", "SKILLGATE_CLUSTER_SECRET="), env...)
	return testkit.StartProc(t, name, cmd)
}

// HTTPGet fetches url with a 5 s timeout and returns the status and
// (up to 16 MiB of) the body; status 0 and the error's text when it could
// not.
func HTTPGet(url string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, string(b)
}
