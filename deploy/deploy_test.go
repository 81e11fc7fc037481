// Package deploy_test checks the deployment files: the systemd units
// (deploy/systemd), the example configs they read (deploy/etc), the
// Dockerfile and .dockerignore, and `make dist`. The flags docs/deploy.md
// and the units write are checked with every other doc's, in docs/.
//
// The tests that build binaries (make dist, the Dockerfile's build step)
// are skipped with -short. Nothing here needs a Docker engine or a running
// systemd: the units are checked with `systemd-analyze verify` (skipped
// when it is not installed; it comes with the systemd package) and the
// Dockerfile is parsed, its build step run on a clone of the repository.
package deploy_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
)

// root is the repository root, relative to this package's directory.
const root = ".."

var units = []string{"skillgate.service", "skillgate-node.service"}

// ---- systemd units ----

// directive is one Key=value line of a unit file.
type directive struct {
	section, key, value string
}

// parseUnit returns a unit file's directives in order: comments skipped,
// continuation lines (ending in a backslash) joined with a space, as
// systemd reads them.
func parseUnit(text string) []directive {
	var out []directive
	section := ""
	var cont strings.Builder
	inCont := false
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if !inCont && (trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';') {
			continue
		}
		if inCont && trimmed != "" && (trimmed[0] == '#' || trimmed[0] == ';') {
			continue // systemd skips comment lines inside a continuation
		}
		if strings.HasSuffix(line, `\`) {
			cont.WriteString(strings.TrimSuffix(line, `\`))
			cont.WriteByte(' ')
			inCont = true
			continue
		}
		cont.WriteString(line)
		full := strings.TrimSpace(cont.String())
		cont.Reset()
		inCont = false
		if strings.HasPrefix(full, "[") && strings.HasSuffix(full, "]") {
			section = full[1 : len(full)-1]
			continue
		}
		k, v, ok := strings.Cut(full, "=")
		if !ok {
			continue
		}
		out = append(out, directive{section, strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// values returns every value of key in section, in order.
func values(ds []directive, section, key string) []string {
	var out []string
	for _, d := range ds {
		if d.section == section && d.key == key {
			out = append(out, d.value)
		}
	}
	return out
}

func TestUnitSettings(t *testing.T) {
	common := map[string]string{
		"DynamicUser":             "yes",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"CapabilityBoundingSet":   "",
		"AmbientCapabilities":     "",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"RestrictSUIDSGID":        "yes",
		"LockPersonality":         "yes",
		"SystemCallArchitectures": "native",
		"Restart":                 "on-failure",
		"Type":                    "exec",
	}
	perUnit := map[string]map[string]string{
		"skillgate.service":      {"ProtectHome": "yes"},
		"skillgate-node.service": {"ProtectHome": "read-only"}, // binaries under /home stay visible
	}
	for _, name := range units {
		t.Run(name, func(t *testing.T) {
			text := testkit.ReadFile(t, filepath.Join("systemd", name))
			ds := parseUnit(text)
			want := map[string]string{}
			for k, v := range common {
				want[k] = v
			}
			for k, v := range perUnit[name] {
				want[k] = v
			}
			for k, v := range want {
				got := values(ds, "Service", k)
				if len(got) != 1 || got[0] != v {
					t.Errorf("[Service] %s: got %q, want exactly one %q", k, got, v)
				}
			}
			if rs := values(ds, "Service", "RestartSec"); len(rs) != 1 || rs[0] == "" || rs[0] == "0" {
				t.Errorf("RestartSec: got %q, want a delay", rs)
			}
			// Backoff keys of systemd >= 254, present but commented out (an
			// older systemd warns about unknown keys).
			for _, k := range []string{"RestartSteps", "RestartMaxDelaySec"} {
				if !regexp.MustCompile(`(?m)^#` + k + `=\S`).MatchString(text) {
					t.Errorf("no commented-out %s= line for systemd >= 254", k)
				}
			}
			// Secrets: credentials only, never an environment file or a
			// token in Environment=.
			for _, d := range ds {
				if d.key == "EnvironmentFile" || d.key == "PassEnvironment" {
					t.Errorf("%s=%s: secrets come through LoadCredential=", d.key, d.value)
				}
				if d.key == "Environment" && strings.Contains(d.value, "TOKEN") {
					t.Errorf("Environment=%s: tokens come through LoadCredential=", d.value)
				}
				// The node must see the host's binaries and write nothing.
				if name == "skillgate-node.service" && slices.Contains([]string{"ReadWritePaths", "InaccessiblePaths", "TemporaryFileSystem", "StateDirectory", "RootDirectory", "RootImage"}, d.key) {
					t.Errorf("%s=%s in the node unit: it must see the host's binaries and need no writable path", d.key, d.value)
				}
			}
			creds := values(ds, "Service", "LoadCredential")
			if !slices.Contains(creds, "node-token:/etc/skillgate/node-token") {
				t.Errorf("LoadCredential: %q lacks node-token:/etc/skillgate/node-token", creds)
			}
			exec := values(ds, "Service", "ExecStart")
			if len(exec) != 1 {
				t.Fatalf("ExecStart: %q, want one", exec)
			}
			if name == "skillgate-node.service" {
				if !strings.Contains(exec[0], "--token-file %d/node-token") {
					t.Errorf("ExecStart=%s: want --token-file %%d/node-token", exec[0])
				}
			} else if !slices.Contains(creds, "agent-token:/etc/skillgate/agent-token") {
				t.Errorf("LoadCredential: %q lacks agent-token:/etc/skillgate/agent-token", creds)
			}
		})
	}
}

// systemdVersion returns the version systemd-analyze reports (252 for
// "systemd 252 (252.38-1~deb12u1)").
func systemdVersion(t *testing.T, analyze string) int {
	out, err := exec.Command(analyze, "--version").Output()
	if err != nil {
		t.Fatalf("systemd-analyze --version: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "systemd" {
		t.Fatalf("systemd-analyze --version: unexpected %q", out)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("systemd-analyze --version: unexpected %q", out)
	}
	return n
}

// uncommentSettings turns every commented-out Key=value line (and the
// continuation lines of a commented-out ExecStart) into a setting, so that
// the alternatives the units document are verified too. Keys in skip stay
// commented.
func uncommentSettings(text string, skip []string) string {
	key := regexp.MustCompile(`^#([A-Z][A-Za-z]*)=`)
	var b strings.Builder
	cont := false
	for line := range strings.Lines(text) {
		switch m := key.FindStringSubmatch(line); {
		case cont && strings.HasPrefix(line, "#"):
			line = line[1:]
		case m != nil && !slices.Contains(skip, m[1]):
			line = line[1:]
		default:
			b.WriteString(line)
			cont = false
			continue
		}
		cont = strings.HasSuffix(strings.TrimRight(line, "\r\n"), `\`)
		b.WriteString(line)
	}
	return b.String()
}

// TestSystemdVerify runs `systemd-analyze verify` on both units, as
// written and with their commented-out alternatives (TLS, and the restart
// backoff where this systemd knows it), and fails on any complaint. The
// units name /usr/local/bin/skillgate{,-node}, which verify insists on
// finding executable: a temporary copy points at stub executables instead.
func TestSystemdVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-analyze not installed: .ci/run installs it (apt-get install systemd)")
		}
		t.Skip("systemd-analyze not installed (Debian/Ubuntu: apt-get install systemd)")
	}
	version := systemdVersion(t, analyze)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"skillgate", "skillgate-node"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	skip := []string{}
	if version < 254 {
		skip = []string{"RestartSteps", "RestartMaxDelaySec"}
		t.Logf("systemd %d: RestartSteps= and RestartMaxDelaySec= (systemd >= 254) stay commented out", version)
	}
	variants := map[string]func(string) string{
		"as-written":   func(s string) string { return s },
		"alternatives": func(s string) string { return uncommentSettings(s, skip) },
	}
	for vname, variant := range variants {
		t.Run(vname, func(t *testing.T) {
			dir := filepath.Join(tmp, vname)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, name := range units {
				text := variant(testkit.ReadFile(t, filepath.Join("systemd", name)))
				text = strings.ReplaceAll(text, "/usr/local/bin/", bin+"/")
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			cmd := exec.Command(analyze, append([]string{"verify", "--man=no"}, paths...)...)
			out, err := cmd.CombinedOutput()
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("systemd-analyze verify: %v\n%s", err, out)
			}
			if vname != "as-written" {
				return
			}
			// The sandbox, as systemd rates it: exposure 0 (best) to 10,
			// --threshold on a 0 to 100 scale. Both units are at 1.4 to 1.6
			// ("OK") with systemd 252.
			for _, p := range paths {
				out, err := exec.Command(analyze, "security", "--offline=true", "--threshold=20", p).CombinedOutput()
				if err != nil {
					lines := strings.Split(strings.TrimSpace(string(out)), "\n")
					t.Errorf("systemd-analyze security %s: %v: %s", filepath.Base(p), err, lines[len(lines)-1])
				}
			}
		})
	}
}

// systemdWords splits an ExecStart= value into its words the way systemd
// does for the quoting and escaping our units use (quotes, %d, %%, $$),
// with %d standing for credDir. Anything else systemd would expand (other
// specifiers, $VAR) is an error: the units must not depend on it.
func systemdWords(value, credDir string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
			continue
		case quote == 0 && (c == '\'' || c == '"'):
			quote, inWord = c, true
			continue
		case quote == 0 && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
			continue
		case c == '\\':
			return nil, fmt.Errorf("backslash escape at %d: not handled here", i)
		case c == '%':
			if i+1 == len(value) {
				return nil, fmt.Errorf("lone %% at the end")
			}
			i++
			switch value[i] {
			case 'd':
				w.WriteString(credDir)
			case '%':
				w.WriteByte('%')
			default:
				return nil, fmt.Errorf("specifier %%%c not expected", value[i])
			}
			inWord = true
			continue
		case c == '$':
			if i+1 < len(value) && value[i+1] == '$' {
				i++
				w.WriteByte('$')
				inWord = true
				continue
			}
			return nil, fmt.Errorf("$ at %d: systemd would expand a variable here", i)
		}
		w.WriteByte(c)
		inWord = true
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// TestGatewayExecStart: the gateway unit runs skillgate serve itself (no
// shell), with its tokens from the two credentials.
func TestGatewayExecStart(t *testing.T) {
	ds := parseUnit(testkit.ReadFile(t, filepath.Join("systemd", "skillgate.service")))
	execStart := values(ds, "Service", "ExecStart")
	if len(execStart) != 1 {
		t.Fatalf("ExecStart: %q, want one", execStart)
	}
	argv, err := systemdWords(execStart[0], "/run/credentials/skillgate.service")
	if err != nil {
		t.Fatalf("ExecStart=%s: %v", execStart[0], err)
	}
	want := []string{"/usr/local/bin/skillgate", "serve", "--config", "/etc/skillgate/gateway.hujson",
		"--agent-token-file", "/run/credentials/skillgate.service/agent-token",
		"--node-token-file", "/run/credentials/skillgate.service/node-token"}
	if strings.Join(argv, " ") != strings.Join(want, " ") {
		t.Errorf("ExecStart words %q, want %q", argv, want)
	}
	creds := values(ds, "Service", "LoadCredential")
	for _, c := range []string{"agent-token:/etc/skillgate/agent-token", "node-token:/etc/skillgate/node-token"} {
		if !slices.Contains(creds, c) {
			t.Errorf("LoadCredential %q missing from %q", c, creds)
		}
	}
}

// ---- Dockerfile ----

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
}

// parseDockerfile returns the Dockerfile's stages, each a list of
// instructions beginning with its FROM.
func parseDockerfile(text string) [][]instruction {
	var stages [][]instruction
	var cont strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue // comments (and parser directives) and blank lines
		}
		if strings.HasSuffix(line, `\`) {
			// Docker removes the backslash and the newline, nothing else.
			cont.WriteString(strings.TrimSuffix(line, `\`))
			continue
		}
		cont.WriteString(line)
		full := strings.TrimSpace(cont.String())
		cont.Reset()
		cmd, args, _ := strings.Cut(full, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			continue // ARG before the first FROM
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	return stages
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(testkit.ReadFile(t, filepath.Join(root, "Dockerfile")))
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a multi-stage build", len(stages))
	}
	first, last := stages[0], stages[len(stages)-1]
	from := strings.Fields(first[0].args)
	if len(from) != 3 || !strings.HasPrefix(from[0], "golang:1.26") || !strings.EqualFold(from[1], "AS") {
		t.Errorf("first stage: FROM %s, want FROM golang:1.26… AS NAME", first[0].args)
	}
	builder := from[len(from)-1]
	var build string
	for _, in := range first {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/skillgate"} {
		if !strings.Contains(build, want) {
			t.Errorf("build step lacks %s:\n%s", want, build)
		}
	}
	if strings.Contains(build, "-buildvcs=false") {
		t.Errorf("build step turns VCS stamping off for good: `skillgate version` would name no commit")
	}

	finalFrom := strings.Fields(last[0].args)[0]
	if !strings.HasPrefix(finalFrom, "gcr.io/distroless/static") && finalFrom != "scratch" {
		t.Errorf("final stage FROM %s, want distroless/static or scratch", finalFrom)
	}
	var user, entrypoint string
	exposed := false
	copied := false
	for _, in := range last[1:] {
		switch in.cmd {
		case "RUN", "SHELL":
			t.Errorf("%s in the final stage (%s): the image has no shell", in.cmd, in.args)
		case "USER":
			user = in.args
		case "EXPOSE":
			exposed = exposed || slices.Contains(strings.Fields(in.args), "7780")
		case "ENTRYPOINT":
			entrypoint = in.args
		case "COPY":
			copied = copied || strings.Contains(in.args, "--from="+builder)
		case "ADD":
			t.Errorf("ADD %s in the final stage: COPY --from=%s only", in.args, builder)
		}
	}
	name, _, _ := strings.Cut(user, ":")
	if user == "" || name == "root" || name == "0" {
		t.Errorf("final stage USER %q, want a non-root user", user)
	}
	if !exposed {
		t.Error("final stage does not EXPOSE 7780")
	}
	if !copied {
		t.Errorf("final stage copies nothing from the %s stage", builder)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil {
		t.Fatalf("ENTRYPOINT %s: want the exec (JSON) form: there is no shell: %v", entrypoint, err)
	}
	if len(ep) < 4 || !strings.HasSuffix(ep[0], "/skillgate") || ep[1] != "serve" ||
		!slices.Equal(ep[len(ep)-2:], []string{"--listen", "0.0.0.0:7780"}) {
		t.Errorf("ENTRYPOINT %q, want [/…/skillgate serve … --listen 0.0.0.0:7780]", ep)
	}
}

func TestDockerignore(t *testing.T) {
	var patterns []string
	sc := bufio.NewScanner(strings.NewReader(testkit.ReadFile(t, filepath.Join(root, ".dockerignore"))))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.Trim(l, "/"))
		}
	}
	for _, p := range patterns {
		if p == ".git" || p == "**" || p == "*" || p == "go.mod" || p == "go.sum" || p == "cmd" {
			t.Errorf(".dockerignore excludes %q: the build needs it (.git for the version's commit)", p)
		}
	}
	for _, want := range []string{"bin", "dist"} {
		if !slices.Contains(patterns, want) {
			t.Errorf(".dockerignore does not exclude %s/", want)
		}
	}
}

// gitHead returns the commit of the repository's HEAD, or skips the test
// when there is no git or no repository.
func gitHead(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git repository at %s (git rev-parse HEAD: %v)", dir, err)
	}
	return strings.TrimSpace(string(out))
}

// TestDockerBuildStep runs the Dockerfile's build step (its RUN … go
// build) without Docker, on a clone of the repository standing in for the
// build context: in a clone the binary names the commit; with a .git that
// points outside the context (a worktree's) it still builds, unstamped.
func TestDockerBuildStep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway twice; skipped with -short")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the build step is a POSIX shell script")
	}
	rev := gitHead(t, root)
	stages := parseDockerfile(testkit.ReadFile(t, filepath.Join(root, "Dockerfile")))
	var script, workdir string
	for _, in := range stages[0] {
		switch {
		case in.cmd == "WORKDIR":
			workdir = in.args
		case in.cmd == "RUN" && strings.Contains(in.args, "go build"):
			script = in.args
		}
	}
	if workdir != "/src" || !strings.Contains(script, "/out/skillgate version") {
		t.Fatalf("build stage: WORKDIR %q, step %q; this test expects WORKDIR /src and a step ending in /out/skillgate version", workdir, script)
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	if out, err := exec.Command("git", "clone", "-q", root, src).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	cloneRev := strings.TrimSpace(mustOutput(t, exec.Command("git", "-C", src, "rev-parse", "HEAD")))
	if cloneRev != rev {
		t.Logf("the clone is at %s (HEAD of the repository: %s)", cloneRev, rev)
	}
	if os.Geteuid() == 0 {
		// A context owned by another uid than the builder's: git refuses
		// such a repository unless told it is safe (the Dockerfile does).
		err := filepath.WalkDir(src, func(p string, _ os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	build := func(name string) string {
		out := filepath.Join(tmp, name)
		s := strings.ReplaceAll(script, "/out/", out+"/")
		s = strings.ReplaceAll(s, "/src", src)
		cmd := exec.Command("/bin/sh", "-c", s)
		cmd.Dir = src
		// ARG VERSION="" is in the environment of RUN.
		cmd.Env = append(os.Environ(), "VERSION=")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("build step (%s): %v\n%s", name, err, b)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return lines[len(lines)-1]
	}
	want := "skillgate 0.1.0-dev+" + cloneRev[:12]
	if tag := exactTag(src); tag != "" {
		want = "skillgate " + strings.TrimPrefix(tag, "v") // go build names the release
	}
	if got := build("clone"); got != want {
		t.Errorf("in a clone: %q, want %q", got, want)
	}
	// A worktree's .git file names a directory outside the context.
	if err := os.RemoveAll(filepath.Join(src, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, ".git"), []byte("gitdir: /nonexistent/.git/worktrees/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := build("worktree"), "skillgate 0.1.0-dev"; got != want {
		t.Errorf("with a worktree's .git: %q, want %q", got, want)
	}
}

// exactTag returns the release tag (vX.Y.Z…) at the repository's HEAD, or "".
func exactTag(dir string) string {
	out, err := exec.Command("git", "-C", dir, "describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func mustOutput(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return string(out)
}

// ---- make dist ----

// TestMakeDist runs `make dist` for the host platform and one cross
// target (skillgate-node for windows/amd64) into a temporary directory and
// checks the names, SHA256SUMS, the build settings each binary records
// (static, -trimpath, the commit) and what the host binaries print as
// their version.
func TestMakeDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries; skipped with -short")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("make dist builds on linux and darwin, not %s", runtime.GOOS)
	}
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make not installed")
	}
	rev := gitHead(t, root)
	fi, err := os.Stat(filepath.Join(root, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	worktree := !fi.IsDir()
	dist := filepath.Join(t.TempDir(), "dist")
	host := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command(mk, "-C", root, "dist", "DIST="+dist, "DIST_PLATFORMS="+host, "DIST_NODE_ONLY=windows/amd64")
	// Not the jobserver of a `make test` this may run under.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}

	hostSuffix := "_" + runtime.GOOS + "_" + runtime.GOARCH
	wantFiles := []string{"skillgate" + hostSuffix, "skillgate-node" + hostSuffix, "skillgate-node_windows_amd64.exe"}
	slices.Sort(wantFiles)

	// SHA256SUMS: `sha256sum` format, one line per binary, right sums.
	sums := testkit.ReadFile(t, filepath.Join(dist, "SHA256SUMS"))
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+)$`)
	var listed []string
	for l := range strings.Lines(sums) {
		m := line.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
		if m == nil {
			t.Errorf("SHA256SUMS line %q is not `<64 hex>  <file>`", l)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dist, m[2]))
		if err != nil {
			t.Errorf("SHA256SUMS lists %s: %v", m[2], err)
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("SHA256SUMS: wrong sum for %s", m[2])
		}
		listed = append(listed, m[2])
	}
	if !slices.Equal(listed, wantFiles) {
		t.Errorf("SHA256SUMS lists %q, want %q", listed, wantFiles)
	}
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" && e.Name() != ".gitignore" {
			files = append(files, e.Name())
		}
	}
	if !slices.Equal(files, wantFiles) {
		t.Errorf("dist holds %q, want %q", files, wantFiles)
	}

	for _, f := range wantFiles {
		p := filepath.Join(dist, f)
		bi, err := buildinfo.ReadFile(p)
		if err != nil {
			t.Errorf("%s: no build information: %v", f, err)
			continue
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		for k, v := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
			if settings[k] != v {
				t.Errorf("%s: build setting %s=%q, want %q", f, k, settings[k], v)
			}
		}
		// go build stamps the commit in a checkout whose .git is a
		// directory; in a linked worktree it cannot (go.dev/issue/58218)
		// and dist must keep it from stamping another repository's.
		if worktree {
			if r, ok := settings["vcs.revision"]; ok {
				t.Errorf("%s: vcs.revision=%s in a linked worktree: not this checkout's", f, r)
			}
		} else if settings["vcs.revision"] != rev {
			t.Errorf("%s: vcs.revision=%q, want %q", f, settings["vcs.revision"], rev)
		}
		switch {
		case strings.HasSuffix(f, ".exe"):
			if pf, err := pe.Open(p); err != nil {
				t.Errorf("%s: not a PE executable: %v", f, err)
			} else {
				pf.Close()
			}
		case strings.Contains(f, "_linux_"):
			ef, err := elf.Open(p)
			if err != nil {
				t.Errorf("%s: not an ELF executable: %v", f, err)
				continue
			}
			for _, prog := range ef.Progs {
				if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
					t.Errorf("%s: dynamically linked (%v), want static", f, prog.Type)
				}
			}
			ef.Close()
		}
	}

	tag := exactTag(root)
	for _, c := range [][]string{{"skillgate" + hostSuffix, "version"}, {"skillgate" + hostSuffix, "--version"}, {"skillgate-node" + hostSuffix, "--version"}} {
		out := mustOutput(t, exec.Command(filepath.Join(dist, c[0]), c[1]))
		if strings.Contains(out, "+"+rev[:12]) {
			continue
		}
		// At a release tag, go build names the release instead.
		if tag == "" || !strings.Contains(out, " "+strings.TrimPrefix(tag, "v")) {
			t.Errorf("%s %s: %q does not name the commit %s", c[0], c[1], out, rev[:12])
		}
	}
}

// ---- example configs ----

// hostBinaries returns the directory of skillgate and skillgate-node for
// this host, built once for every package that runs them
// (testkit.Binaries).
func hostBinaries(t *testing.T) string {
	t.Helper()
	return testkit.Binaries(t, "cmd/skillgate", "cmd/skillgate-node")
}

// TestExampleConfigs loads deploy/etc's configs with the programs that
// read them: the gateway's through `skillgate eval` (the same checks as
// serve: settings, tokens, agents), the node's through `skillgate-node
// facts`.
func TestExampleConfigs(t *testing.T) {
	bin := hostBinaries(t)
	for _, args := range [][]string{
		{"skillgate", "eval", "--store", filepath.Join(root, "examples", "store"), "--config", filepath.Join("etc", "gateway.hujson"),
			"--hosts", filepath.Join(root, "examples", "hosts.json"), "--agent", "main"},
		{"skillgate-node", "facts", "--config", filepath.Join("etc", "node.hujson"), "--bins", "sh"},
	} {
		out, err := exec.Command(filepath.Join(bin, args[0]), args[1:]...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
