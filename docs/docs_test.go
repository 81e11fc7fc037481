// Package docs_test holds README.md and docs/*.md to the product, as a new
// operator would try them:
//
//   - every ```sh (or bash, shell) block is run (TestCommandBlocks) in a
//     sandbox: a temporary directory holding bin/ (the three programs, as
//     `make build` builds them), examples/, gateway.hujson and hosts.json
//     (the examples'), and bucket/ (a store that passes validate); a block
//     followed at once by a plain ``` block must print exactly that block;
//   - a block that cannot run on one machine (it needs a bucket, a cluster,
//     root, systemd or Docker, or it is the test suite itself) says so on
//     the line before its fence: <!-- not run: REASON -->;
//   - a block that runs only scaled down says how on that line:
//     <!-- run with: "OLD" → "NEW"; … --> (in order; {port} in NEW is one
//     free port);
//   - every skillgate, skillgate-node and skillgate-fleet command line in
//     any block or inline code of the docs, and the units' ExecStart lines,
//     passes only flags its command's -h lists (TestDocumentedFlags);
//   - every config key the docs name (`gateway.…`, `agents.…`, `skills.…`)
//     is one of config.Settings, and every JSON block holding a gateway
//     config parses (TestDocumentedKeys).
package docs_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/internal/testkit"
)

// root is the repository root, relative to this package's directory.
const root = ".."

// programs are what `make build` builds into bin/.
var programs = []string{"cmd/skillgate", "cmd/skillgate-node", "cmd/skillgate-fleet"}

// A fence is one fenced code block of a Markdown file.
type fence struct {
	file   string // relative to the repository root
	line   int    // of the opening fence, 1-based
	info   string // the info string: "sh", "json", "" …
	body   string // the lines between the fences, the fence's indentation removed
	marker string // the HTML comment on the line before the fence, if any
	end    int    // the line of the closing fence
}

// docFiles are README.md and docs/*.md, relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range files {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(f, root+string(os.PathSeparator))))
	}
	return out
}

var fenceRe = regexp.MustCompile("^( *)(```+)\\s*([A-Za-z0-9_+-]*)\\s*$")

// fences returns the fenced code blocks of a Markdown text.
func fences(file, text string) []fence {
	lines := strings.Split(text, "\n")
	var out []fence
	for i := 0; i < len(lines); i++ {
		m := fenceRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		f := fence{file: file, line: i + 1, info: m[3]}
		if i > 0 {
			if prev := strings.TrimSpace(lines[i-1]); strings.HasPrefix(prev, "<!--") {
				f.marker = prev
			}
		}
		indent, ticks := m[1], m[2]
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == ticks {
				break
			}
			body = append(body, strings.TrimPrefix(lines[j], indent))
		}
		f.body = strings.Join(body, "\n")
		if len(body) > 0 {
			f.body += "\n"
		}
		f.end = j + 1
		out = append(out, f)
		i = j
	}
	return out
}

// isShell says whether a block holds commands to run.
func isShell(f fence) bool { return f.info == "sh" || f.info == "bash" || f.info == "shell" }

var (
	notRunRe  = regexp.MustCompile(`^<!--\s*not run:\s*(.*?)\s*-->$`)
	runWithRe = regexp.MustCompile(`^<!--\s*run with:\s*(.*?)\s*-->$`)
	replRe    = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)"\s*→\s*"((?:[^"\\]|\\.)*)"$`)
)

// replacements parses the pairs of a run with marker.
func replacements(spec string) ([][2]string, error) {
	var out [][2]string
	for part := range strings.SplitSeq(spec, ";") {
		m := replRe.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil {
			return nil, fmt.Errorf("%q is not \"OLD\" → \"NEW\"", strings.TrimSpace(part))
		}
		old, err1 := strconv.Unquote(`"` + m[1] + `"`)
		repl, err2 := strconv.Unquote(`"` + m[2] + `"`)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%q: bad quoting", part)
		}
		out = append(out, [2]string{old, repl})
	}
	return out, nil
}

// sandbox makes the directory a block runs in and returns it with the
// environment to run it with.
func sandbox(t *testing.T, bins string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, filepath.Join(root, "examples"), filepath.Join(dir, "examples"))
	copyTree(t, filepath.Join(root, "examples", "store"), filepath.Join(dir, "bucket"))
	// The example store holds one skill validate refuses on purpose
	// (summarize: no description, to show the fallback): a bucket a CI
	// job would upload passes.
	if err := os.RemoveAll(filepath.Join(dir, "bucket", "skills", "summarize")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"gateway.hujson", "hosts.json"} {
		copyFile(t, filepath.Join(root, "examples", f), filepath.Join(dir, f))
	}
	binDir := filepath.Join(dir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range programs {
		name := filepath.Base(p)
		if err := os.Symlink(filepath.Join(bins, name), filepath.Join(binDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// make: the blocks' `make build` finds bin/ built already; any other
	// target is not for this sandbox.
	shims := filepath.Join(dir, ".shims")
	if err := os.Mkdir(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	makeShim := "#!/bin/sh\n[ \"$*\" = build ] && exit 0\necho \"make $*: the docs test runs only make build (bin/ is built); mark the block <!-- not run: … -->\" >&2\nexit 2\n"
	if err := os.WriteFile(filepath.Join(shims, "make"), []byte(makeShim), 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, ".home")
	tmp := filepath.Join(dir, ".tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + shims + string(os.PathListSeparator) + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8", "TERM=dumb",
	}
	return dir, env
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// blockTimeout bounds one block's run.
const blockTimeout = 2 * time.Minute

// TestCommandBlocks runs every command block of the docs that can run on
// one machine, and holds the others to a reason.
func TestCommandBlocks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the blocks are POSIX shell")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed to run the docs' blocks: %v", err)
	}
	var bins string
	ran, notRun := 0, 0
	for _, file := range docFiles(t) {
		blocks := fences(file, testkit.ReadFile(t, filepath.Join(root, file)))
		for i, f := range blocks {
			where := fmt.Sprintf("%s:%d", f.file, f.line)
			m := notRunRe.FindStringSubmatch(f.marker)
			w := runWithRe.FindStringSubmatch(f.marker)
			switch {
			case !isShell(f):
				if m != nil || w != nil {
					t.Errorf("%s: a %q block is never run: drop the marker %s", where, f.info, f.marker)
				}
				continue
			case m != nil:
				if m[1] == "" {
					t.Errorf("%s: <!-- not run: --> without a reason", where)
				}
				notRun++
				continue
			case f.marker != "" && w == nil:
				t.Errorf("%s: the comment %s before a command block is neither <!-- not run: REASON --> nor <!-- run with: … -->", where, f.marker)
				continue
			}
			script := f.body
			if w != nil {
				repl, err := replacements(w[1])
				if err != nil {
					t.Errorf("%s: run with: %v", where, err)
					continue
				}
				for _, r := range repl {
					if !strings.Contains(script, r[0]) {
						t.Errorf("%s: run with: the block has no %q", where, r[0])
					}
					script = strings.ReplaceAll(script, r[0], r[1])
				}
			}
			// A plain block right after this one is what it prints.
			var want *string
			if i+1 < len(blocks) && blocks[i+1].line == f.end+1 && blocks[i+1].info == "" {
				want = &blocks[i+1].body
			}
			if bins == "" {
				bins = testkit.Binaries(t, programs...)
			}
			ran++
			t.Run(strings.ReplaceAll(where, "/", "_"), func(t *testing.T) {
				runBlock(t, bins, script, want)
			})
		}
	}
	t.Logf("%d blocks run, %d marked not run", ran, notRun)
	if ran < 4 {
		t.Errorf("only %d blocks run: is the parsing broken?", ran)
	}
}

// runBlock runs one block's script with bash -e in a fresh sandbox, then
// ends whatever it left running.
func runBlock(t *testing.T, bins, script string, want *string) {
	dir, env := sandbox(t, bins)
	if strings.Contains(script, "{port}") {
		script = strings.ReplaceAll(script, "{port}", strconv.Itoa(testkit.FreePort(t)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	setProcessGroup(cmd)
	// Files, not pipes: what a block leaves running in the background
	// holds them open, and Wait must not wait for it.
	stdout, stderr := outFile(t, dir, "stdout"), outFile(t, dir, "stderr")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
	}
	killGroup(cmd) // a block's `… &`
	out, errOut := testkit.ReadFile(t, stdout.Name()), testkit.ReadFile(t, stderr.Name())
	if err != nil {
		t.Fatalf("the block failed: %v\nscript:\n%s\nstdout:\n%s\nstderr:\n%s", err, script, out, errOut)
	}
	if want != nil && out != *want {
		t.Errorf("the block prints\n%s\nthe docs say it prints\n%s", out, *want)
	}
}

// outFile makes a file in dir for a block's output.
func outFile(t *testing.T, dir, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, ".tmp", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// ---- flags ----

// commandFlags returns the flags a command's -h lists.
func commandFlags(t *testing.T, bin string, args ...string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, append(args, "-h")...).CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("%s %s -h lists no flags:\n%s", bin, strings.Join(args, " "), out)
	}
	return flags
}

// commandLines returns the logical lines (continuations joined) of the
// docs' code, blocks and inline spans alike, and of the units' ExecStart
// lines (commented-out ones too), each with where it is.
func commandLines(t *testing.T) (lines, where []string) {
	t.Helper()
	add := func(src, text string) {
		var cur strings.Builder
		for l := range strings.Lines(text) {
			l = strings.TrimRight(l, "\r\n")
			l = strings.TrimPrefix(l, "#") // commented-out unit lines
			if strings.HasSuffix(l, `\`) {
				cur.WriteString(strings.TrimSuffix(l, `\`) + " ")
				continue
			}
			cur.WriteString(l)
			lines = append(lines, cur.String())
			where = append(where, src)
			cur.Reset()
		}
	}
	for _, doc := range docFiles(t) {
		parts := strings.Split(testkit.ReadFile(t, filepath.Join(root, doc)), "```")
		for i, part := range parts {
			if i%2 == 1 { // a code block
				add(doc, part)
				continue
			}
			spans := strings.Split(part, "`")
			for j := 1; j < len(spans); j += 2 { // inline code
				add(doc, strings.ReplaceAll(spans[j], "\n", " "))
			}
		}
	}
	units, err := filepath.Glob(filepath.Join(root, "deploy", "systemd", "*.service"))
	if err != nil || len(units) == 0 {
		t.Fatalf("no units in deploy/systemd: %v", err)
	}
	for _, u := range units {
		var block strings.Builder
		in := false
		for l := range strings.Lines(testkit.ReadFile(t, u)) {
			if strings.HasPrefix(strings.TrimPrefix(l, "#"), "ExecStart=") {
				in = true
			}
			if in {
				block.WriteString(l)
				in = strings.HasSuffix(strings.TrimRight(l, "\r\n"), `\`)
			}
		}
		add(filepath.Base(u), block.String())
	}
	return lines, where
}

// TestDocumentedFlags checks every skillgate, skillgate-node and
// skillgate-fleet command line of the docs and the units: the command
// exists and every flag it passes is one the command lists in -h.
func TestDocumentedFlags(t *testing.T) {
	bins := testkit.Binaries(t, programs...)
	sg := filepath.Join(bins, "skillgate")
	known := map[string]map[string]bool{}
	for _, c := range []string{"serve", "eval", "validate", "status", "mcp"} {
		known["skillgate "+c] = commandFlags(t, sg, c)
	}
	for _, c := range []string{"approve", "suppress", "hold", "sign"} {
		known["skillgate governance "+c] = commandFlags(t, sg, "governance", c)
	}
	for _, c := range []string{"config check", "config schema", "version"} {
		known["skillgate "+c] = map[string]bool{}
	}
	node := filepath.Join(bins, "skillgate-node")
	known["skillgate-node"] = commandFlags(t, node)
	known["skillgate-node facts"] = commandFlags(t, node, "facts")
	fleet := filepath.Join(bins, "skillgate-fleet")
	for _, c := range []string{"nodes", "skills", "hosts", "load", "longpoll", "mcp"} {
		known["skillgate-fleet "+c] = commandFlags(t, fleet, c)
	}
	known["skillgate-fleet version"] = map[string]bool{}

	lines, where := commandLines(t)
	cmdRe := regexp.MustCompile(`(?:^|[\s'"(/=\[|])(skillgate(?:-node|-fleet)?)(?:_[a-z0-9]+_[a-z0-9]+)?\s+(.*)$`)
	// A command ends at a shell operator or a comment.
	opRe := regexp.MustCompile(`\s(?:\|\|?|&&|;|#|>|<|&)(?:\s|$)`)
	flagRe := regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	checked := 0
	for i, l := range lines {
		for _, seg := range opRe.Split(" "+l+" ", -1) {
			m := cmdRe.FindStringSubmatchIndex(seg)
			if m == nil {
				continue
			}
			// An option's value (journalctl -u skillgate-node), not a command.
			if before := strings.Fields(seg[:m[2]]); len(before) > 0 && strings.HasPrefix(before[len(before)-1], "-") {
				continue
			}
			sub := cmdRe.FindStringSubmatch(seg)
			prog, words := sub[1], strings.Fields(sub[2])
			name := prog
			for len(words) > 0 && known[name+" "+words[0]] == nil && known[name+" "+strings.Join(words[:min(2, len(words))], " ")] != nil {
				name += " " + words[0] // a command group: governance, config
				words = words[1:]
			}
			switch {
			case len(words) > 0 && known[name+" "+words[0]] != nil:
				name += " " + words[0]
				words = words[1:]
			case known[name] == nil:
				continue // a unit, a file or a word in prose, not a command line
			}
			checked++
			for _, w := range words {
				w = strings.Trim(w, `"'[](),`)
				if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
					continue
				}
				flag, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
				if !flagRe.MatchString(flag) || flag == "h" || flag == "help" {
					continue
				}
				if !known[name][flag] {
					t.Errorf("%s: `%s` passes -%s, which `%s -h` does not list", where[i], strings.TrimSpace(seg), flag, name)
				}
			}
		}
	}
	t.Logf("%d command lines checked", checked)
	if checked < 40 {
		t.Errorf("only %d command lines found: is the parsing broken?", checked)
	}
}

// ---- config keys ----

// settingPaths are config.Settings' paths and every object above them.
func settingPaths() map[string]bool {
	paths := map[string]bool{}
	for _, s := range config.Settings {
		p := s.Path
		paths[p] = true
		for i := range p {
			if p[i] == '.' {
				paths[p[:i]] = true
			}
		}
	}
	return paths
}

// keyRe matches a config key path at the start of inline code: a dotted
// path under gateway, agents or skills, with <id>/<key> segments and []
// for an array's elements.
var keyRe = regexp.MustCompile(`^((?:gateway|agents|skills)(?:\.(?:[A-Za-z][A-Za-z0-9_-]*|<[A-Za-z]+>)(?:\[\])?)+)(?:$|[\s:=,)])`)

// configRe matches a JSON block that is a gateway config: an object whose
// first key is one of the config's roots.
var configRe = regexp.MustCompile(`^\s*(?://[^\n]*\n\s*)*\{\s*(?://[^\n]*\n\s*)*"(gateway|agents|skills)"\s*:`)

// openClawOnly are keys of OpenClaw's the docs name that skillgate keeps
// and does not read (config/openclaw.go), with where they are explained.
var openClawOnly = map[string]string{
	"skills.limits.maxSkillsInPrompt": "docs/decisions.md: kept and not read",
}

// messageRe is what follows a key in a quoted error message ("KEY:
// unknown key; …"), not a value ("KEY: \"required\"", "KEY: {…}").
var messageRe = regexp.MustCompile(`^:\s+[A-Za-z]`)

// isKey says whether inline code that starts with the dotted path p names
// a config key: not a Go identifier (gateway.ReadConfigFile), a file
// (gateway.hujson) or an error message the docs quote.
func isKey(span, p string) bool {
	seg := strings.Split(p, ".")
	for _, s := range seg[1:] {
		if s[0] >= 'A' && s[0] <= 'Z' {
			return false
		}
	}
	switch seg[len(seg)-1] {
	case "hujson", "json", "jsonc", "yaml", "md", "go":
		return false
	}
	rest := span[len(p):]
	if messageRe.MatchString(rest) && !regexp.MustCompile(`^:\s+(true|false|null)\b`).MatchString(rest) {
		return false
	}
	return true
}

// pattern turns a concrete key path into the table's pattern: an agent's
// id is <id>, a skill's entry key <key>.
func pattern(paths map[string]bool, p string) string {
	seg := strings.Split(p, ".")
	for i := 1; i < len(seg); i++ {
		parent := strings.Join(seg[:i], ".")
		switch parent {
		case "agents", "agents.entries":
			if !paths[parent+"."+seg[i]] {
				seg[i] = "<id>"
			}
		case "skills.entries":
			seg[i] = "<key>"
		}
	}
	return strings.Join(seg, ".")
}

// TestDocumentedKeys checks the config keys the docs name against the
// config's own table, and parses the gateway configs they show.
func TestDocumentedKeys(t *testing.T) {
	paths := settingPaths()
	checked := 0
	for _, doc := range docFiles(t) {
		text := testkit.ReadFile(t, filepath.Join(root, doc))
		parts := strings.Split(text, "```")
		for i := 0; i < len(parts); i += 2 { // prose: the inline code
			spans := strings.Split(parts[i], "`")
			for j := 1; j < len(spans); j += 2 {
				m := keyRe.FindStringSubmatch(spans[j])
				if m == nil || !isKey(spans[j], m[1]) {
					continue
				}
				checked++
				if p := pattern(paths, m[1]); !paths[p] && openClawOnly[p] == "" {
					t.Errorf("%s: `%s` names %s, which is no key of config.Settings", doc, spans[j], p)
				}
			}
		}
		for _, f := range fences(doc, text) {
			if f.info != "json" && f.info != "jsonc" && f.info != "hujson" {
				continue
			}
			if !configRe.MatchString(f.body) {
				continue // not a gateway config (an MCP host's, a JSON answer)
			}
			checked++
			if _, err := config.Parse(fmt.Sprintf("%s:%d", doc, f.line+1), []byte(f.body)); err != nil {
				t.Errorf("%s:%d: the gateway config does not parse:\n%v", doc, f.line, err)
			}
		}
	}
	t.Logf("%d keys and configs checked", checked)
	if checked < 20 {
		t.Errorf("only %d keys found: is the parsing broken?", checked)
	}
}

// TestFences: the parser the tests above stand on.
func TestFences(t *testing.T) {
	text := "intro\n<!-- not run: needs a cluster -->\n```sh\nskillgate serve\n```\n```\nout\n```\n   ```sh\n   a \\\n     b\n   ```\n"
	got := fences("x.md", text)
	if len(got) != 3 {
		t.Fatalf("%d fences, want 3: %+v", len(got), got)
	}
	if got[0].info != "sh" || got[0].body != "skillgate serve\n" || got[0].marker != "<!-- not run: needs a cluster -->" || got[0].line != 3 || got[0].end != 5 {
		t.Errorf("first fence: %+v", got[0])
	}
	if got[1].info != "" || got[1].line != got[0].end+1 || got[1].body != "out\n" {
		t.Errorf("second fence: %+v", got[1])
	}
	if got[2].body != "a \\\n  b\n" {
		t.Errorf("indented fence body %q", got[2].body)
	}
	r, err := replacements(`"-n 10000" → "-n 30"; "a\"b" → "{port}"`)
	if err != nil || !slices.Equal(r, [][2]string{{"-n 10000", "-n 30"}, {`a"b`, "{port}"}}) {
		t.Errorf("replacements: %q, %v", r, err)
	}
}
