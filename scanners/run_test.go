package scanners

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// shell returns a scanner that runs the sh script body: exec
// ["/bin/sh", SCRIPT, "{dir}", args...] (sh reads the script, so it is
// never executed while another test's fork holds it open for writing).
func shell(t *testing.T, name, body string, args ...string) Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), name+".sh")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return Config{Name: name, Exec: append([]string{"/bin/sh", p, DirArg}, args...), Timeout: 20 * time.Second}
}

// skillFiles is an ordinary skill directory.
func skillFiles() map[string][]byte {
	return map[string][]byte{
		"SKILL.md":          []byte("---\nname: demo\ndescription: A demo.\n---\n# Demo\n"),
		"scripts/run me.sh": []byte("#!/bin/sh\necho hi\n"),
		"docs/a/b/c.md":     []byte("deep\n"),
		"empty":             nil,
	}
}

func TestRunAnswer(t *testing.T) {
	cfg := shell(t, "ok", `
printf '{"verdict": "block", "extra": 1, "findings": [{"rule": "bad", "severity": "error", "file": "%s/scripts/run me.sh", "line": 2, "message": "found"}]}' "$1"
exit 3
`)
	r := Run(context.Background(), cfg, skillFiles())
	want := Result{Name: "ok", Verdict: "block", Findings: []Finding{{"bad", "error", "scripts/run me.sh", 2, "found"}}, Ms: r.Ms}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
	if r.Ms < 0 || r.Ms > 20000 {
		t.Errorf("ms = %d", r.Ms)
	}
}

func TestRunSARIF(t *testing.T) {
	cfg := shell(t, "sarif", `
cat <<EOF
{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "lint", "rules": [{"id": "L1"}]}}, "results": [
  {"ruleId": "L2", "level": "warning", "message": {"text": "w"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file://$1/scripts/run%20me.sh"}, "region": {"startLine": 2}}}]},
  {"ruleIndex": 0, "level": "error", "message": {"text": "e"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "SKILL.md"}, "region": {"startLine": 5}}}]},
  {"ruleId": "L3", "level": "note", "message": {"text": "n"}}
]}]}
EOF
`)
	cfg.Format = FormatSARIF
	r := Run(context.Background(), cfg, skillFiles())
	want := []Finding{{"L2", "warn", "scripts/run me.sh", 2, "w"}, {"L1", "error", "SKILL.md", 5, "e"}, {"L3", "info", "", 0, "n"}}
	if r.Verdict != VerdictBlock || r.Error != "" || !reflect.DeepEqual(r.Findings, want) {
		t.Fatalf("got %+v", r)
	}
	if e := r.Effect(true, nil); e.Mode != "block" || e.Reason != "blocked by governance: scanner sarif: L1 at SKILL.md:5" {
		t.Errorf("effect %+v", e)
	}
}

// The copy: every file with its bytes, files 0444, directories 0555, in a
// private 0700 directory, the scanner started in the root; all of it
// removed afterwards, even after the scanner changed the modes.
func TestRunCopy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cfg := shell(t, "copy", `
{
  echo "root $1"
  echo "pwd $(pwd)"
  echo "parent $(stat -c %a "$1/..")"
  find "$1" -printf '%m %y %P\n' | sort
  cat "$1/SKILL.md" "$1/scripts/run me.sh"
  if (echo x > "$1/SKILL.md") 2>/dev/null; then echo writable; else echo read-only; fi
} > "$2"
chmod 0 "$1/docs/a" "$1/docs" "$1"
echo '{"verdict": "allow"}'
`, out)
	r := Run(context.Background(), cfg, skillFiles())
	if r.Verdict != VerdictAllow || r.Error != "" {
		t.Fatalf("got %+v", r)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	root := strings.TrimPrefix(lines[0], "root ")
	if filepath.Base(root) != "skill" || !strings.HasPrefix(filepath.Base(filepath.Dir(root)), "skillgate-scan-") {
		t.Errorf("root %q", root)
	}
	want := []string{
		"pwd " + root,
		"parent 700",
		"444 f SKILL.md",
		"444 f empty",
		"555 d ",
		"555 d docs",
		"555 d docs/a",
		"555 d docs/a/b",
		"444 f docs/a/b/c.md",
		"555 d scripts",
		"444 f scripts/run me.sh",
		"---", "name: demo", "description: A demo.", "---", "# Demo",
		"#!/bin/sh", "echo hi",
	}
	// find prints the root with an empty name; sort puts it by locale.
	got := lines[1 : len(lines)-1]
	if !sameSet(got, want) {
		t.Errorf("copy:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// root bypasses file modes; anyone else cannot write.
	if w := lines[len(lines)-1]; os.Geteuid() != 0 && w != "read-only" {
		t.Errorf("the copy is %s", w)
	}
	for _, p := range []string{root, filepath.Dir(root)} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// The environment is PATH and the passEnv names that are set; stdin is
// /dev/null.
func TestRunEnvironment(t *testing.T) {
	t.Setenv("SKILLGATE_TEST_PASSED", "yes")
	t.Setenv("SKILLGATE_TEST_SECRET", "s3cret")
	t.Setenv("HOME", "/root")
	out := filepath.Join(t.TempDir(), "out")
	cfg := shell(t, "env", `
env > "$2"
echo "stdin $(readlink /proc/$$/fd/0)" >> "$2"
if read -r line; then echo "read $line" >> "$2"; else echo "stdin at its end" >> "$2"; fi
echo '{"verdict": "allow"}'
`, out)
	cfg.PassEnv = []string{"SKILLGATE_TEST_PASSED", "SKILLGATE_TEST_NOT_SET", "PATH"}
	r := Run(context.Background(), cfg, skillFiles())
	if r.Verdict != VerdictAllow {
		t.Fatalf("got %+v", r)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		switch {
		case strings.HasPrefix(l, "PWD="): // set by sh itself
		case strings.HasPrefix(l, "PATH="):
			if l != "PATH="+os.Getenv("PATH") {
				t.Errorf("%s, want the gateway's PATH", l)
			}
			names = append(names, "PATH")
		case strings.HasPrefix(l, "stdin ") || strings.HasPrefix(l, "read "):
			names = append(names, l)
		default:
			names = append(names, l)
		}
	}
	want := []string{"PATH", "SKILLGATE_TEST_PASSED=yes", "stdin /dev/null", "stdin at its end"}
	if !sameSet(names, want) {
		t.Errorf("the scanner saw:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
}

// A scanner that does not answer in time is killed with everything it
// started in its process group.
func TestRunTimeout(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	cfg := shell(t, "slow", `
sleep 300 &
echo $! >> "$2"
sh -c 'sleep 301' &
echo $! >> "$2"
echo $$ >> "$2"
echo '{"verdict": "allow"' # no end: never an answer
wait
`, pids)
	cfg.Timeout = 2 * time.Second
	start := time.Now()
	r := Run(context.Background(), cfg, skillFiles())
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v", d)
	}
	if r.Verdict != VerdictError || r.Error != "timed out after 2s" || len(r.Findings) != 0 || r.Findings == nil {
		t.Fatalf("got %+v", r)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	ps := strings.Fields(string(b))
	if len(ps) != 3 {
		t.Fatalf("pids %q", ps)
	}
	for _, p := range ps {
		pid, _ := strconv.Atoi(p)
		waitGone(t, pid)
	}
}

// waitGone fails the test unless process pid is gone (or a zombie
// nobody reaps) within a few seconds.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// "pid (comm) S …": the state follows the last ')'.
		if s := string(st); strings.HasPrefix(strings.TrimSpace(s[strings.LastIndexByte(s, ')')+1:]), "Z") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("process %d still runs", pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// escape is a script's start that leaves behind a process of another
// session holding stdout open, its pid in the file $2.
const escape = `setsid sh -c 'echo $$ > "$1"; exec sleep 30' sh "$2" &
while [ ! -s "$2" ]; do sleep 0.05; done
`

func TestRunFailures(t *testing.T) {
	tests := []struct {
		name, body string
		timeout    time.Duration
		want       string // Result.Error
	}{
		{"crash: exit status, stderr quoted", "echo 'rules did not compile' >&2\nexit 3\n", 0,
			`exit status 3 and no answer; stderr: "rules did not compile"`},
		{"crash: a signal", "kill -SEGV $$\n", 0, "signal: segmentation fault and no answer"},
		{"nothing, exit 0", "exit 0\n", 0, "exit status 0 and no answer"},
		{"garbage", "echo 'hello, world'\n", 0,
			"exit status 0 and an unreadable answer (not a verdict answer: invalid character 'h' looking for beginning of value (at byte 1))"},
		{"garbage with control characters", `printf '\033[31m\001{'; printf 'warn\033[0m\n' >&2; exit 1`, 0,
			`exit status 1 and an unreadable answer (not a verdict answer: invalid character '\x1b' looking for beginning of value (at byte 1)); stderr: "warn[0m"`},
		{"an unknown verdict", `echo '{"verdict": "deny"}'`, 0,
			`exit status 0 and an unreadable answer ("verdict" must be "allow", "warn" or "block", got "deny")`},
		{"over 1 MiB, endless", `yes '{"verdict": "allow"}'`, 0, "answer over 1 MiB"},
		{"1 MiB and a byte", `head -c 1048577 /dev/zero | tr '\0' ' '`, 0, "answer over 1 MiB"},
		{"stderr: its end quoted", "head -c 3000000 /dev/zero | tr '\\0' e >&2\nprintf 'the end' >&2\nexit 1\n", 0,
			`exit status 1 and no answer; stderr: "…` + strings.Repeat("e", 200-len("the end")) + `the end"`},
		{"garbage, output held open", escape + "echo garbage\n", 0,
			"exit status 0 and an unreadable answer (not a verdict answer: invalid character 'g' looking for beginning of value (at byte 1)); a process it left behind held its output open"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			cfg := shell(t, "broken", tc.body, pidfile)
			if tc.timeout != 0 {
				cfg.Timeout = tc.timeout
			}
			start := time.Now()
			r := Run(context.Background(), cfg, skillFiles())
			if b, err := os.ReadFile(pidfile); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				_ = syscall.Kill(pid, syscall.SIGKILL) // the process that left the group
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("Run took %v", d)
			}
			if r.Verdict != VerdictError || r.Error != tc.want || r.Findings == nil || len(r.Findings) != 0 || r.Name != "broken" {
				t.Errorf("got %+v\nwant error %q", r, tc.want)
			}
			if len(r.Error) > MaxErrorLen {
				t.Errorf("error of %d bytes", len(r.Error))
			}
		})
	}
}

// Exactly MiB is an answer; an answer counts whatever the exit status.
func TestRunLimitsAndExitStatus(t *testing.T) {
	cfg := shell(t, "big", `printf '{"verdict": "warn", "findings": [{"rule": "r"}]}'; head -c $((1048576 - 49)) /dev/zero | tr '\0' ' '; exit 9`)
	r := Run(context.Background(), cfg, skillFiles())
	if r.Verdict != VerdictWarn || r.Error != "" || len(r.Findings) != 1 {
		t.Fatalf("got %+v", r)
	}
}

func TestRunRefusesUnsafePaths(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := shell(t, "s", "touch \"$2\"\necho '{\"verdict\": \"allow\"}'\n", marker)
	tests := []struct {
		path, want string
	}{
		{"../escape", `unsafe file path "../escape": an empty, "." or ".." segment`},
		{"a/../../escape", `unsafe file path "a/../../escape": an empty, "." or ".." segment`},
		{"/etc/x", `unsafe file path "/etc/x": absolute`},
		{"a//b", `unsafe file path "a//b": an empty, "." or ".." segment`},
		{"./a", `unsafe file path "./a": an empty, "." or ".." segment`},
		{"a/", `unsafe file path "a/": an empty, "." or ".." segment`},
		{"", `unsafe file path "": empty`},
		{"a\x00b", `unsafe file path "ab": a NUL byte`},
		{strings.Repeat("n", 256), `unsafe file path "` + strings.Repeat("n", 197) + `…": a name longer than 255 bytes`},
	}
	for _, tc := range tests {
		files := skillFiles()
		files[tc.path] = []byte("x")
		r := Run(context.Background(), cfg, files)
		if r.Verdict != VerdictError || r.Error != tc.want {
			t.Errorf("%q: got %+v\nwant %q", tc.path, r, tc.want)
		}
	}
	files := skillFiles()
	files["scripts/run me.sh/x"] = []byte("x")
	if r := Run(context.Background(), cfg, files); r.Error != `unsafe file path "scripts/run me.sh/x": inside the file "scripts/run me.sh"` {
		t.Errorf("file inside a file: %+v", r)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Error("the scanner ran")
	}
	// Names with spaces, quotes, line breaks and non-ASCII are fine.
	files = skillFiles()
	files["we ird/\"q\" 'a'\nb é.md"] = []byte("x")
	if r := Run(context.Background(), cfg, files); r.Verdict != VerdictAllow {
		t.Errorf("odd names: %+v", r)
	}
}

func TestRunStartFailures(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		exec []string
		want string
	}{
		{[]string{"/nonexistent/scanner", "{dir}"}, "cannot start /nonexistent/scanner: no such file or directory"},
		{[]string{plain}, "cannot start " + plain + ": permission denied"},
		{nil, "no program to run (exec is empty)"},
		{[]string{"SKILL.md"}, `the program must be an absolute path, got "SKILL.md"`},
	}
	for _, tc := range tests {
		r := Run(context.Background(), Config{Name: "x", Exec: tc.exec}, skillFiles())
		if r.Verdict != VerdictError || r.Error != tc.want {
			t.Errorf("%q: got %+v, want %q", tc.exec, r, tc.want)
		}
	}
}

// A process that left the scanner's group and holds its output open does
// not keep an answer from counting, nor Run from returning.
func TestRunOutputHeldOpen(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	cfg := shell(t, "held", escape+"echo '{\"verdict\": \"warn\"}'\n", pidfile)
	start := time.Now()
	r := Run(context.Background(), cfg, skillFiles())
	d := time.Since(start)
	if b, err := os.ReadFile(pidfile); err == nil {
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if r.Verdict != VerdictWarn || r.Error != "" {
		t.Errorf("got %+v", r)
	}
	if d < heldOpenGrace || d > 10*time.Second {
		t.Errorf("Run took %v", d)
	}
}

func TestRunCanceled(t *testing.T) {
	cfg := shell(t, "slow", "sleep 300\n")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	r := Run(ctx, cfg, skillFiles())
	if r.Verdict != VerdictError || r.Error != "canceled" {
		t.Fatalf("got %+v", r)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v", d)
	}
}
