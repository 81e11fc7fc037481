package scanners

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Result is one scanner's outcome for one skill directory: what reports
// carry in "scanners": [...]. Every field is always present: Findings is
// [] (never null) and Error "" when the scanner answered.
type Result struct {
	Name     string    `json:"name"`
	Verdict  string    `json:"verdict"` // VerdictAllow, VerdictWarn, VerdictBlock or VerdictError
	Findings []Finding `json:"findings"`
	Ms       int64     `json:"ms"`    // wall time of the run (the copy included), in milliseconds
	Error    string    `json:"error"` // why the scanner failed ("" unless Verdict is VerdictError)
}

// Failed reports whether the scanner failed (gave no usable answer).
func (r *Result) Failed() bool { return r.Verdict == VerdictError }

// Run runs one scanner over one skill directory and returns its Result.
// It never fails: a failure is a Result with VerdictError and Error.
//
// files are the directory's files: "/"-separated paths relative to the
// directory ("SKILL.md", "scripts/run.sh") and their bytes. The paths are
// untrusted: an absolute one, one with an empty, "." or ".." segment or a
// NUL byte, or a file inside another file fails the run before anything
// is written (at most MaxCopyFiles files and MaxCopyBytes bytes). They are
// written into a private temporary directory (0700) as the tree
// "<tmp>/skill" (the root, "{dir}"), files 0444 and directories 0555, and
// removed afterwards, whatever the scanner did to them.
//
// The program cfg.Exec[0] runs with "{dir}" arguments replaced by the
// root, in the root, in a process group of its own, with the environment
// PATH (the gateway's, or /usr/local/bin:/usr/bin:/bin when unset) and
// the variables of cfg.PassEnv that are set, stdin /dev/null, stdout read
// up to MaxStdout (more fails the run and kills the group) and stderr's
// last MaxStderrKept bytes kept for the error. When the program exits,
// what is left of its process group is killed, and its output is read for
// at most half a second more (a process that left the group, which
// nothing kills, may hold it open). At the timeout, or when ctx ends, the
// whole group is killed and the run fails ("timed out after 30s",
// "canceled").
//
// An answer that parses (ParseAnswer in cfg.Format) counts whatever the
// exit status; otherwise the run fails, saying how the program ended and
// quoting its stderr.
func Run(ctx context.Context, cfg Config, files map[string][]byte) Result {
	start := time.Now()
	res := Result{Name: cfg.Name, Findings: []Finding{}}
	fail := func(why string) Result {
		res.Verdict, res.Findings, res.Error = VerdictError, []Finding{}, clean(why, MaxErrorLen)
		res.Ms = time.Since(start).Milliseconds()
		return res
	}
	if len(cfg.Exec) == 0 {
		return fail("no program to run (exec is empty)")
	}
	if !filepath.IsAbs(cfg.Exec[0]) {
		// Never resolved against the copy, the skill's own files.
		return fail("the program must be an absolute path, got " + strconv.Quote(cfg.Exec[0]))
	}
	if !supported {
		return fail("external scanners need a Unix system")
	}
	if err := checkFiles(files); err != nil {
		return fail(err.Error())
	}
	tmp, root, err := writeCopy(files)
	if tmp != "" {
		defer removeCopy(tmp)
	}
	if err != nil {
		return fail("cannot write the skill directory's copy: " + err.Error())
	}
	o := execute(ctx, &cfg, root)
	switch {
	case o.startErr != nil:
		return fail("cannot start " + cfg.Exec[0] + ": " + startError(o.startErr))
	case o.canceled:
		return fail("canceled")
	case o.timedOut:
		return fail("timed out after " + cfg.timeout().String() + stderrNote(o.stderr))
	case o.overflow:
		return fail(fmt.Sprintf("answer over %d MiB%s", MaxStdout>>20, stderrNote(o.stderr)))
	}
	verdict, fs, perr := ParseAnswer(cfg.format(), o.stdout, root)
	if perr == nil {
		res.Verdict, res.Findings = verdict, fs
		res.Ms = time.Since(start).Milliseconds()
		return res
	}
	ended := "exit status 0"
	var ee *exec.ExitError
	if errors.As(o.waitErr, &ee) {
		ended = ee.Error() // "exit status 2", "signal: segmentation fault"
	} else if o.waitErr != nil {
		ended = o.waitErr.Error()
	}
	held := ""
	if o.heldOpen {
		held = "; a process it left behind held its output open"
	}
	if len(bytes.TrimSpace(o.stdout)) == 0 {
		return fail(ended + " and no answer" + held + stderrNote(o.stderr))
	}
	return fail(ended + " and an unreadable answer (" + perr.Error() + ")" + held + stderrNote(o.stderr))
}

// outcome is what execute saw of one run.
type outcome struct {
	stdout   []byte
	stderr   []byte // the last MaxStderrKept bytes
	waitErr  error
	startErr error
	overflow bool
	timedOut bool
	canceled bool
	heldOpen bool // a process left behind held the output open past the program's exit
}

// heldOpenGrace is how long the output is read after the program exits.
const heldOpenGrace = 500 * time.Millisecond

// execute runs the scanner in root and collects its output.
func execute(ctx context.Context, cfg *Config, root string) (o outcome) {
	args := slices.Clone(cfg.Exec)
	for i, a := range args {
		if a == DirArg {
			args[i] = root
		}
	}
	cmd := &exec.Cmd{Path: args[0], Args: args, Dir: root, Env: environ(cfg.PassEnv)}
	outR, outW, err := os.Pipe()
	if err != nil {
		o.startErr = err
		return o
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		o.startErr = err
		return o
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW // stdin nil: /dev/null
	setProcAttr(cmd)
	timeout := cfg.timeout()
	deadline := time.Now().Add(timeout)
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		o.startErr = err
		return o
	}
	pgid := cmd.Process.Pid
	var overflow atomic.Bool
	var stdout bytes.Buffer
	var stderr tail
	var readers sync.WaitGroup
	readers.Go(func() {
		if _, err := io.Copy(&stdout, io.LimitReader(outR, MaxStdout+1)); err == nil && stdout.Len() > MaxStdout {
			overflow.Store(true)
			killGroup(pgid)
		}
	})
	readers.Go(func() { _, _ = io.Copy(&stderr, errR) })

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case o.waitErr = <-waited:
	case <-timer.C:
		o.timedOut = true
		killGroup(pgid)
		o.waitErr = <-waited
	case <-ctx.Done():
		o.canceled = true
		killGroup(pgid)
		o.waitErr = <-waited
	}
	// The scanner's lifetime is its program's: what is left of its group
	// goes with it. What the program wrote is in the pipes by now; a
	// process that left the group (setsid) may still hold them open:
	// reading stops after a grace period then.
	killGroup(pgid)
	stop := time.Now().Add(heldOpenGrace)
	if deadline.Before(stop) {
		stop = deadline
	}
	if o.timedOut || o.canceled {
		stop = time.Now()
	}
	_ = outR.SetReadDeadline(stop)
	_ = errR.SetReadDeadline(stop)
	readers.Wait()
	o.heldOpen = !o.timedOut && !o.canceled && !time.Now().Before(stop)
	o.overflow = overflow.Load()
	o.stdout = stdout.Bytes()
	o.stderr = stderr.b
	return o
}

// environ is the scanner's environment: PATH and the set variables of
// names.
func environ(names []string) []string {
	p := os.Getenv("PATH")
	if p == "" {
		p = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + p}
	for _, n := range names {
		if n == "PATH" || !validEnvName(n) {
			continue
		}
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

// tail is an io.Writer that keeps the last MaxStderrKept bytes.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - MaxStderrKept; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// stderrNote quotes the end of the scanner's stderr for an error, or "".
func stderrNote(b []byte) string {
	s := clean(string(b), 4*MaxStderrKept)
	if s == "" {
		return ""
	}
	if len(s) > MaxStderrQuoted {
		cut := len(s) - MaxStderrQuoted
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return "; stderr: " + strconv.Quote(s)
}

// startError says why a program did not start, without Go's wrapping.
func startError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkFiles refuses paths that are unsafe to write and copies over the
// bounds.
func checkFiles(files map[string][]byte) error {
	if len(files) > MaxCopyFiles {
		return fmt.Errorf("%d files, over the %d-file limit of a scanner's copy", len(files), MaxCopyFiles)
	}
	total := 0
	for p, b := range files {
		if err := checkPath(p); err != nil {
			return err
		}
		total += len(b)
	}
	if total > MaxCopyBytes {
		return fmt.Errorf("%d bytes, over the %d MiB limit of a scanner's copy", total, MaxCopyBytes>>20)
	}
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := files[d]; ok {
				return fmt.Errorf("unsafe file path %s: inside the file %s", strconv.Quote(p), strconv.Quote(d))
			}
		}
	}
	return nil
}

// checkPath refuses a path that is not a plain relative one.
func checkPath(p string) error {
	bad := func(why string) error {
		return fmt.Errorf("unsafe file path %s: %s", strconv.Quote(clean(p, 200)), why)
	}
	switch {
	case p == "":
		return bad("empty")
	case len(p) > 4096:
		return bad("longer than 4096 bytes")
	case strings.IndexByte(p, 0) >= 0:
		return bad("a NUL byte")
	case strings.HasPrefix(p, "/"):
		return bad("absolute")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return bad(`an empty, "." or ".." segment`)
		case len(seg) > 255:
			return bad("a name longer than 255 bytes")
		}
	}
	return nil
}

// writeCopy writes files (checked by checkFiles) into a new private
// directory tmp as the tree tmp/skill (root). tmp is returned for removal
// even with an error.
func writeCopy(files map[string][]byte) (tmp, root string, err error) {
	tmp, err = os.MkdirTemp("", "skillgate-scan-")
	if err != nil {
		return "", "", err
	}
	root = filepath.Join(tmp, "skill")
	if err := os.Mkdir(root, 0o700); err != nil {
		return tmp, "", err
	}
	dirs := map[string]bool{}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		name := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			return tmp, "", errors.Unwrap(err)
		}
		if err := writeFile(name, files[p]); err != nil {
			return tmp, "", fmt.Errorf("%s: %w", p, err)
		}
	}
	// Directories read-only, the deepest first, the root last.
	ds := make([]string, 0, len(dirs)+1)
	for d := range dirs {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	ds = append(ds, ".")
	for _, d := range ds {
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(d)), 0o555); err != nil {
			return tmp, "", errors.Unwrap(err)
		}
	}
	return tmp, root, nil
}

// writeFile creates name (it must not exist) with data, mode 0444.
func writeFile(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return errors.Unwrap(err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o444) // whatever the umask
	}
	return err
}

// removeCopy removes the private directory, making every directory in it
// writable first (the copy's are 0555, and the scanner may have changed
// modes).
func removeCopy(tmp string) {
	_ = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(tmp)
}
