package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

const (
	hostMac   = `{"id": "mac-1", "os": "macOS", "roles": ["execution"], "capabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"], "env": [], "hostBinStatus": {"gh": true, "tmux": false}}`
	hostLinux = `{"id": "linux-1", "os": "linux", "roles": ["specialized"], "env": ["K"], "hostBinStatus": {"curl": true}}`
)

// hostIDs lists the ids in the index, in slot order (id order).
func hostIDs(hs *hostSet) []string {
	res := (&eligibility.Prepared{Req: eligibility.Requirements{HostRoles: []string{"execution", "specialized"}}}).EvaluateIndexed(hs.index)
	return res.Hosts
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadHostsFile: the forms --hosts accepts, and errors that name the
// file, the host and the field.
func TestReadHostsFile(t *testing.T) {
	tests := []struct {
		name, content string
		ids, skipped  []string
		err           string // exact, after "--hosts: FILE: "
	}{
		{"array", "[" + hostMac + "," + hostLinux + "]", []string{"linux-1", "mac-1"}, nil, ""},
		{"empty array", " [ ] \n", []string{}, nil, ""},
		{"nodes answer", `{"nodes": [` + strings.Replace(hostMac, `{"id"`, `{"connectedAt": "2026-11-22T10:00:00Z", "factsAt": "2026-11-22T10:00:01Z", "id"`, 1) + `,
			{"id": "late", "os": "linux", "roles": ["specialized"], "factsAt": null}]}`, []string{"mac-1"}, []string{"late"}, ""},
		{"paged answer: next is ignored in a file", `{"nodes": [` + hostLinux + `], "next": "bGludXgtMQ"}`, []string{"linux-1"}, nil, ""},
		{"nodes null then nodes", `{"other": {"a": [1, {"b": null}]}, "nodes": null, "nodes": [` + hostLinux + `]}`, []string{"linux-1"}, nil, ""},
		{"factsAt null in a plain array is just a field", `[{"id": "a", "os": "linux", "roles": ["specialized"], "factsAt": null}]`, []string{"a"}, nil, ""},
		{"HuJSON comments and trailing commas", "// fleet\n[\n  " + hostLinux + ", /* mac */ " + hostMac + ",\n]\n", []string{"linux-1", "mac-1"}, nil, ""},
		{"escapes and other spellings go through encoding/json", `[{"ID": "caps", "OS": "linux", "Roles": ["specialized"]}, {"id": "e\u0073c", "os": "linux", "roles": ["specialized"], "hostBinStatus": {"g\"h": true}}]`,
			[]string{"caps", "esc"}, nil, ""},

		{"not JSON", `[{"id":`, nil, nil, "not valid JSON or HuJSON: it ends in the middle of a value"},
		{"missing comma", `[` + hostLinux + ` ` + hostMac + `]`, nil, nil, fmt.Sprintf("not valid JSON or HuJSON: expected comma after array element (after %d bytes)", len(`[`+hostLinux+` `))},
		{"syntax error", `[{"id": tru}]`, nil, nil, "not valid JSON or HuJSON: invalid character '}' in literal true (expecting 'e') (after 11 bytes)"},
		{"object without nodes", `{"hosts": []}`, nil, nil, `expected a JSON array of host facts, or an object with "nodes" (the answer of GET /v1/nodes)`},
		{"nodes null", `{"nodes": null}`, nil, nil, `expected a JSON array of host facts, or an object with "nodes" (the answer of GET /v1/nodes)`},
		{"nodes not a list", `{"nodes": {"a": 1}}`, nil, nil, "nodes: expected a list of nodes, got {"},
		{"a number", `42`, nil, nil, `expected a JSON array of host facts, or an object with "nodes" (the answer of GET /v1/nodes)`},
		{"data after the document", `[] []`, nil, nil, "not valid JSON: more data after the end of the document"},
		{"wrong type", `[` + hostLinux + `, {"id": "b", "os": 5}]`, nil, nil, "host 1: json: cannot unmarshal number into Go struct field HostFacts.os of type string"},
		{"invalid host", `[` + hostLinux + `, {"id": "b", "os": "linux", "roles": ["execution"], "capabilities": ["shell.exec"]}]`, nil, nil,
			`host 1 (id "b"): capabilities: an execution host must have filesystem.list, filesystem.read, filesystem.write, shell.exec; missing filesystem.list, filesystem.read, filesystem.write`},
		{"duplicate", `{"nodes": [` + hostLinux + `, {"id": "x", "factsAt": null}, ` + hostLinux + `]}`, nil, nil, `host 2: id "linux-1" appears twice`},
		{"bad next", `{"nodes": [], "next": 5}`, nil, nil, "next: json: cannot unmarshal number into Go value of type string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "hosts.json", tt.content)
			hs, err := readHosts(context.Background(), p, "")
			if tt.err != "" {
				if want := "--hosts: " + p + ": " + tt.err; err == nil || err.Error() != want {
					t.Fatalf("error %v\nwant       %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := hostIDs(hs); !slices.Equal(got, tt.ids) {
				t.Errorf("hosts %q, want %q", got, tt.ids)
			}
			if !slices.Equal(hs.skipped, tt.skipped) || hs.nskipped != len(tt.skipped) {
				t.Errorf("skipped %q (%d), want %q", hs.skipped, hs.nskipped, tt.skipped)
			}
		})
	}
}

// TestEvalSkipNotes: nodes without facts are named on stderr, the first
// twenty of them; the rest are counted.
func TestEvalSkipNotes(t *testing.T) {
	var nodes []string
	for i := range 22 {
		nodes = append(nodes, fmt.Sprintf(`{"id": "n%02d", "os": "linux", "roles": ["specialized"], "factsAt": null}`, i))
	}
	p := writeFile(t, "nodes.json", `{"nodes": [`+strings.Join(nodes, ",")+`]}`)
	_, errOut, code := runCmd(t, "eval", "--store", bucket, "--hosts", p, "--agent", "main")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var want strings.Builder
	for i := range 20 {
		fmt.Fprintf(&want, "skillgate eval: node n%02d has not reported facts yet (factsAt is null); like the gateway, eval does not count it\n", i)
	}
	want.WriteString("skillgate eval: and 2 more nodes have not reported facts yet; eval does not count them either\n")
	if errOut != want.String() {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want.String())
	}
}

// TestReadHostsManyBatches: more hosts than one batch of the decoder, in
// an order that is not id order; an error deep in the list is the first
// in input order and names its position.
func TestReadHostsManyBatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	var want []string
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		id := fmt.Sprintf("h%d", 999-i)
		want = append(want, id)
		fmt.Fprintf(&b, `{"id": %q, "os": "linux", "roles": ["specialized"], "hostBinStatus": {"b%d": true}}`, id, i%7)
	}
	b.WriteString("]")
	slices.Sort(want)
	hs, err := readHosts(context.Background(), writeFile(t, "many.json", b.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := hostIDs(hs); !slices.Equal(got, want) {
		t.Errorf("%d hosts, want %d in id order", len(got), len(want))
	}

	bad := strings.Replace(b.String(), `"id": "h300", "os": "linux", "roles": ["specialized"]`, `"id": "h300", "os": "linux", "roles": ["gpu"]`, 1)
	bad = strings.Replace(bad, `"id": "h10"`, `"id": "h11"`, 1) // a later error: never reported
	p := writeFile(t, "bad.json", bad)
	_, err = readHosts(context.Background(), p, "")
	if want := `--hosts: ` + p + `: host 699 (id "h300"): roles[0]: unknown role "gpu" (expected one of execution, specialized)`; err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

// TestReadHostsSizeLimit: a file over the limit is refused before it is
// read, naming the file and the limit; a stream (a pipe) is cut at it.
func TestReadHostsSizeLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxHostsBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	_, errOut, code := runCmd(t, "eval", "--store", bucket, "--hosts", p, "--agent", "main")
	if want := "skillgate eval: --hosts: " + p + ": larger than 1 GiB (1073741824 bytes), the limit of a hosts file\n"; code != 2 || errOut != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errOut, want)
	}

	defer func(old int64) { maxHostsBytes = old }(maxHostsBytes)
	maxHostsBytes = int64(len("[" + hostLinux + "]"))
	if _, err := readHosts(context.Background(), writeFile(t, "exact.json", "["+hostLinux+"]"), ""); err != nil {
		t.Errorf("a file of exactly the limit: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write([]byte("[" + hostLinux + " ]"))
		w.Close()
	}()
	c := &hostCollector{seen: map[string]int{}}
	fd := fmt.Sprintf("/dev/fd/%d", r.Fd())
	err = readHostsFile(fd, c)
	r.Close()
	if want := fmt.Sprintf("--hosts: %s: larger than %d bytes, the limit of a hosts file", fd, maxHostsBytes); err == nil || err.Error() != want {
		t.Errorf("pipe over the limit: %v\nwant %s", err, want)
	}
}

// TestHostParserAgreesWithEncodingJSON: whatever hostParser accepts, it
// decodes exactly as encoding/json; what it leaves to encoding/json is
// decoded by it. Each element goes through decodeHost either way.
func TestHostParserAgreesWithEncodingJSON(t *testing.T) {
	tests := []struct {
		elem string
		fast bool // hostParser decodes it itself
	}{
		{hostMac, true},
		{hostLinux, true},
		{`{}`, true},
		{` { "id" : "a" , "os" : null , "roles" : null , "env" : [ ] , "hostBinStatus" : { } } `, true},
		{`{"id": "a", "hostBinStatus": {"x": true, "x": false, "y": true}}`, true},
		{`{"id": "a", "connectedAt": "2026", "factsAt": null, "extra": [1, -2.5e3, true, {"k": "v\"]}"}], "n": -0}`, true},
		{`{"id": "a", "factsAt": "2026-11-22T10:00:01Z"}`, true},
		{`{"id": "a", "id": "b"}`, false},         // repeated key
		{`{"Id": "a"}`, false},                    // case-insensitive match
		{`{"ıd": "a"}`, false},                    // non-ASCII key
		{`{"id": "\u0061"}`, false},               // escape
		{`{"id": "é"}`, false},                    // non-ASCII value
		{`{"roles": ["execution", null]}`, false}, // null element
		{`{"hostBinStatus": {"gh": null}}`, false},
		{`{"hostBinStatus": {"gh": 1}}`, false},
		{`{"env": "K"}`, false},
		{`{"os": 5}`, false},
		{`null`, false},
		{`[]`, false},
	}
	for _, nodes := range []bool{false, true} {
		for _, tt := range tests {
			var fast nodeFacts
			p := newHostParser()
			if got := p.parse([]byte(tt.elem), &fast, nodes); got != tt.fast {
				t.Errorf("%s: parse = %v, want %v", tt.elem, got, tt.fast)
			}
			var want nodeFacts
			var err error
			if nodes {
				err = json.Unmarshal([]byte(tt.elem), &want)
			} else {
				err = json.Unmarshal([]byte(tt.elem), &want.HostFacts)
			}
			if !tt.fast || err != nil {
				continue
			}
			if !sameFacts(&fast, &want) {
				t.Errorf("%s (nodes %v): parsed %+v, encoding/json %+v", tt.elem, nodes, fast, want)
			}
		}
	}
}

// sameFacts compares decoded facts; empty and nil lists are alike (the
// gateway treats them alike), factsAt counts only as null or not.
func sameFacts(a, b *nodeFacts) bool {
	norm := func(n *nodeFacts) (protocol.HostFacts, bool) {
		f := n.HostFacts
		for _, l := range []*[]string{&f.Roles, &f.Capabilities, &f.Env} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		if len(f.HostBinStatus) == 0 {
			f.HostBinStatus = nil
		}
		return f, string(n.FactsAt) == "null"
	}
	fa, na := norm(a)
	fb, nb := norm(b)
	return reflect.DeepEqual(fa, fb) && na == nb
}

// FuzzHostParser: on any valid JSON object the parser either declines or
// agrees with encoding/json.
func FuzzHostParser(f *testing.F) {
	for _, s := range []string{hostMac, hostLinux, `{"id": "a", "factsAt": null, "x": {"y": [1, "2"]}}`, `{"hostBinStatus": {"a": true, "a": false}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		for _, nodes := range []bool{false, true} {
			var fast, want nodeFacts
			if !newHostParser().parse([]byte(s), &fast, nodes) {
				continue
			}
			var err error
			if nodes {
				err = json.Unmarshal([]byte(s), &want)
			} else {
				err = json.Unmarshal([]byte(s), &want.HostFacts)
			}
			if err != nil {
				t.Fatalf("%s: parsed, but encoding/json fails: %v", s, err)
			}
			if !sameFacts(&fast, &want) {
				t.Fatalf("%s: parsed %+v, encoding/json %+v", s, fast, want)
			}
		}
	})
}

// TestWriteReportJSON: the streamed report is byte for byte the one of
// json.Encoder, also with host ids encoding/json must escape.
func TestWriteReportJSON(t *testing.T) {
	filtered := []eligibility.Filtered{{Requirement: "os", Values: []string{"darwin"}, Hosts: 8412},
		{Requirement: "bins", Values: []string{"<gh>", "ünï"}, Hosts: 0}}
	mk := func(name string, hosts []string) report.SkillReport {
		return report.SkillReport{Name: name, Dir: name, Location: "skills/" + name + "/SKILL.md", Scope: "global",
			Reasons: []string{"requires bins: <gh> & \"q\""}, Hosts: hosts, Filtered: filtered}
	}
	// Host ids encoding/json quotes, of every length up to past a skill's
	// own encoding: one of them is encoded over it.
	var long []string
	for n := range 1200 {
		long = append(long, "é"+strings.Repeat("x", n))
	}
	reports := []report.Report{
		{Agent: "main", Skills: []report.SkillReport{}, Diagnostics: []skill.Diagnostic{}},
		{Agent: "main", Skills: nil},
		{Agent: "a\u2028b", Prompt: "<available_skills>\n  <skill name=\"x\">&amp;</skill>\n</available_skills>",
			Skills: []report.SkillReport{
				mk("none", nil),
				mk("empty", []string{}),
				mk("plain", []string{"a", "b-1", "c.d_e"}),
				mk("hostile", []string{"q\"uote", "back\\slash", "<&>", "tab\t", "del\x7f", "ünï", "line\u2028sep", "bad\xffutf8", "\x00"}),
				mk("long", long),
				{Name: "nil filtered", Hosts: []string{}},
				{Name: "empty filtered", Hosts: []string{"z"}, Filtered: []eligibility.Filtered{}},
			},
			Diagnostics: []skill.Diagnostic{{Location: "x", Level: skill.LevelWarn, Message: "m <b>"}}},
	}
	for i, rep := range reports {
		var want, got bytes.Buffer
		if err := encodeAll(&want, &rep); err != nil {
			t.Fatal(err)
		}
		if err := writeReportJSON(&got, &rep); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("report %d:\n--- got ---\n%s\n--- want ---\n%s", i, got.String(), want.String())
		}
	}
}

// TestHostsURLErrors: answers eval refuses, each named with the URL.
func TestHostsURLErrors(t *testing.T) {
	t.Setenv("SKILLGATE_AGENT_TOKEN", "")
	pages, bigPages := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/denied":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error": "missing bearer token"}`))
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error": "no route"}`))
		case "/forever": // a new cursor on every page
			pages++
			fmt.Fprintf(w, `{"nodes": [], "next": "c%d"}`, pages)
		case "/same":
			w.Write([]byte(`{"nodes": [], "next": "c"}`))
		case "/big":
			bigPages++
			fmt.Fprintf(w, `{"nodes": [{"id": "h%d", "os": "linux", "roles": ["specialized"]}], "next": "c%d"}`, bigPages, bigPages)
		case "/hang":
			<-r.Context().Done()
		case "/bad":
			w.Write([]byte(`{"nodes": [{"id": "a/b", "os": "linux", "roles": ["specialized"]}]}`))
		}
	}))
	defer srv.Close()
	defer func(b int64, p int) { maxHostsBytes, maxNodesPages = b, p }(maxHostsBytes, maxNodesPages)
	maxNodesPages = 5
	maxHostsBytes = 3 * int64(len(`{"nodes": [{"id": "h1", "os": "linux", "roles": ["specialized"]}], "next": "c1"}`))
	tests := []struct{ path, want string }{
		{"/denied", "GET " + srv.URL + "/denied: 401 Unauthorized: missing bearer token (set SKILLGATE_AGENT_TOKEN to the gateway's agent token)"},
		{"/missing?limit=2", "GET " + srv.URL + "/missing?limit=2: 404 Not Found: no route (give the URL of GET /v1/nodes, e.g. http://127.0.0.1:7780/v1/nodes)"},
		{"/forever", "GET " + srv.URL + "/forever: more than 5 pages; stopped (the gateway keeps answering a \"next\")"},
		{"/same?limit=1", "GET " + srv.URL + "/same?cursor=c&limit=1: the gateway answered the same \"next\" again; stopped"},
		{"/big", "GET " + srv.URL + "/big?cursor=c3: the pages of GET /v1/nodes add up to more than " + fmt.Sprint(maxHostsBytes) + " bytes, the limit; stopped"},
		{"/bad", "GET " + srv.URL + `/bad: host 0 (id "a/b"): id: "a/b" contains a slash or backslash`},
	}
	for _, tt := range tests {
		_, errOut, code := runCmd(t, "eval", "--store", bucket, "--hosts", srv.URL+tt.path, "--agent", "main")
		if want := "skillgate eval: --hosts: " + tt.want + "\n"; code != 2 || errOut != want {
			t.Errorf("%s: exit %d, stderr\n%q\nwant\n%q", tt.path, code, errOut, want)
		}
	}

	defer func(d time.Duration) { hostsTimeout = d }(hostsTimeout)
	hostsTimeout = 50 * time.Millisecond
	_, errOut, code := runCmd(t, "eval", "--store", bucket, "--hosts", srv.URL+"/hang", "--agent", "main")
	if code != 2 || !strings.Contains(errOut, srv.URL+"/hang") || !strings.Contains(errOut, "each page must arrive within 50ms") {
		t.Errorf("hang: exit %d, stderr %q", code, errOut)
	}

	for _, tt := range []struct{ hosts, want string }{
		{"ftp://x/v1/nodes", `--hosts: scheme "ftp": give a file, or the http:// or https:// URL of GET /v1/nodes`},
		{"http:///v1/nodes", `--hosts: "http:///v1/nodes" has no host; e.g. http://127.0.0.1:7780/v1/nodes`},
		{"http://u:secret@x/v1/nodes", "--hosts: credentials in the URL are not supported (a command line shows in ps); set SKILLGATE_AGENT_TOKEN"},
	} {
		_, errOut, code := runCmd(t, "eval", "--store", bucket, "--hosts", tt.hosts, "--agent", "main")
		if want := "skillgate eval: " + tt.want + "\n"; code != 2 || errOut != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", tt.hosts, code, errOut, want)
		}
	}
}

// TestStatusReadsEveryPage: status follows "next", keeping the query.
func TestStatusReadsEveryPage(t *testing.T) {
	t.Setenv("SKILLGATE_AGENT_TOKEN", "tok")
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/v1/nodes" {
			w.WriteHeader(http.StatusNotFound) // /readyz: a gateway that predates it
			return
		}
		queries = append(queries, r.URL.RawQuery)
		at := `"connectedAt": "2026-11-22T10:00:00Z", "factsAt": "2026-11-22T10:00:01Z"`
		switch r.URL.Query().Get("cursor") {
		case "":
			fmt.Fprintf(w, `{"nodes": [{"id": "a", "os": "linux", "roles": ["specialized"], %s}], "next": "YQ"}`, at)
		case "YQ":
			fmt.Fprintf(w, `{"nodes": [{"id": "b", "os": "linux", "roles": ["specialized"], %s}], "next": "Yg"}`, at)
		default:
			fmt.Fprintf(w, `{"nodes": [{"id": "c", "os": "linux", "roles": ["specialized"], "connectedAt": "2026-11-22T10:00:00Z", "factsAt": null}]}`)
		}
	}))
	defer srv.Close()
	out, errOut, code := runCmd(t, "status", "--gateway", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := []string{"", "cursor=YQ", "cursor=Yg"}; !slices.Equal(queries, want) {
		t.Errorf("queries %q, want %q", queries, want)
	}
	if !strings.HasPrefix(out, "3 nodes connected to "+srv.URL+"\n") || !strings.Contains(out, "\nc  ") {
		t.Errorf("output:\n%s", out)
	}
}
