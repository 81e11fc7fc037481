// Command scan-yara is skillgate's YARA adapter: an external scanner for
// gateway.governance.scanners that runs the yara program (Debian's "yara"
// package, 4.x) over every regular file of a skill directory and prints
// skillgate's verdict answer:
//
//	{"verdict": "allow"|"warn"|"block", "findings": [{"rule", "severity", "file", "line", "message"}]}
//
// Usage:
//
//	scan-yara -rules FILE [-rules FILE]... [-yara PATH] DIR
//
// Each match of a rule in a file is one finding: rule is the YARA rule's
// name, file the path relative to DIR ("/"-separated), line the line of
// the rule's first matching string (0 for a rule matched without
// strings), message the rule's "description" meta (and what matched).
// A rule tagged "block", or with neither "block" nor "warn", makes an
// "error" finding; one tagged "warn" a "warn" finding. The verdict is block
// with any error finding, warn with any warn finding, else allow.
//
// yara runs once per file, and is handed the file as the open descriptor
// /dev/fd/3, so that no file name (spaces, quotes, line breaks) ever
// reaches its command line or its output. Symbolic links and special files
// are not followed or scanned. A failure (yara missing, rules that do not
// compile, an unreadable file) prints why on stderr and exits 2 with
// nothing on stdout: skillgate counts the scanner as failed.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// target is the path yara is given: the scanned file, as descriptor 3.
const target = "/dev/fd/3"

const (
	maxFindings = 1000     // findings printed
	maxLineScan = 64 << 20 // bytes of a file read to turn an offset into a line
	maxYaraErr  = 2 << 10  // bytes of yara's stderr quoted in an error
)

// Finding and Answer are skillgate's verdict format.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
}

type Answer struct {
	Verdict  string    `json:"verdict"`
	Findings []Finding `json:"findings"`
}

type rulesFlag []string

func (r *rulesFlag) String() string { return strings.Join(*r, ",") }
func (r *rulesFlag) Set(s string) error {
	*r = append(*r, s)
	return nil
}

func main() {
	var rules rulesFlag
	fl := flag.NewFlagSet("scan-yara", flag.ContinueOnError)
	fl.Var(&rules, "rules", "a YARA rules file (repeat for more)")
	yara := fl.String("yara", "yara", "the yara program (looked up in PATH without a slash)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: scan-yara -rules FILE [-rules FILE]... [-yara PATH] DIR")
		fl.PrintDefaults()
	}
	if err := fl.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if len(rules) == 0 || fl.NArg() != 1 {
		fl.Usage()
		os.Exit(2)
	}
	a, err := scan(*yara, rules, fl.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "scan-yara:", err)
		os.Exit(2)
	}
	out, err := json.Marshal(a)
	if err == nil {
		_, err = os.Stdout.Write(append(out, '\n'))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scan-yara:", err)
		os.Exit(2)
	}
}

// scan scans every regular file under dir.
func scan(yara string, rules []string, dir string) (*Answer, error) {
	prog, err := exec.LookPath(yara)
	if err != nil {
		return nil, fmt.Errorf("yara program: %w (install Debian's yara package)", err)
	}
	args := []string{"-w", "-s", "-g", "-m"}
	for i, r := range rules {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("rules: %w", err)
		}
		// A namespace of our own: yara would read "a:b.yar" as namespace
		// "a" and file "b.yar".
		args = append(args, fmt.Sprintf("r%d:%s", i, abs))
	}
	// The rules compile (checked once, so that a bad rules file fails the
	// scan whatever the directory holds).
	check := exec.Command(prog, append(slices.Clone(args), os.DevNull)...)
	if out, err := check.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("rules: yara: %v: %s", err, bytes.TrimSpace(out))
	}
	args = append(args, target)
	// The directory itself may be given as a symbolic link.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	a := &Answer{Verdict: "allow", Findings: []Finding{}}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil // directories are walked; links and special files are not scanned
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		ms, err := scanFile(prog, args, p)
		if err != nil {
			return fmt.Errorf("%s: %w", strconv.Quote(filepath.ToSlash(rel)), err)
		}
		for _, m := range ms {
			if len(a.Findings) == maxFindings {
				break
			}
			f := m.finding(filepath.ToSlash(rel))
			a.Findings = append(a.Findings, f)
			switch {
			case f.Severity == "error":
				a.Verdict = "block"
			case f.Severity == "warn" && a.Verdict == "allow":
				a.Verdict = "warn"
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// match is one rule that matched one file.
type match struct {
	rule string
	tags []string
	meta map[string]string
	off  int64  // the first matching string's offset; -1 for none
	str  string // that string's identifier ("$c2")
	data string // and what it matched, as yara prints it
	line int
}

// finding turns a match in file into a Finding.
func (m *match) finding(file string) Finding {
	sev := "error"
	for _, t := range m.tags {
		if strings.EqualFold(t, "block") {
			sev = "error"
			break
		}
		if strings.EqualFold(t, "warn") {
			sev = "warn"
		}
	}
	msg := m.meta["description"]
	if msg == "" {
		msg = "YARA rule " + m.rule + " matched"
	}
	if m.str != "" {
		d := m.data
		if len(d) > 80 {
			d = d[:80] + "…"
		}
		msg += fmt.Sprintf(" (%s: %q)", m.str, d)
	}
	return Finding{Rule: m.rule, Severity: sev, File: file, Line: m.line, Message: msg}
}

// scanFile runs yara over one file and returns its matches.
func scanFile(prog string, args []string, path string) ([]*match, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(prog, args...)
	cmd.ExtraFiles = []*os.File{f}
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: maxYaraErr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ms, perr := parseOutput(out)
	_, _ = io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if werr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "no message"
		}
		return nil, fmt.Errorf("yara: %v: %s", werr, msg)
	}
	if perr != nil {
		return nil, fmt.Errorf("reading yara's output: %w", perr)
	}
	if len(ms) > 0 {
		// Offsets to lines, reading the file without moving its offset.
		data, err := io.ReadAll(io.NewSectionReader(f, 0, maxLineScan))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.off >= 0 && m.off <= int64(len(data)) {
				m.line = bytes.Count(data[:m.off], []byte{'\n'}) + 1
			}
		}
	}
	return ms, nil
}

// parseOutput reads what yara -s -g -m prints for the one target: for each
// rule that matched, "RULE [TAGS] [META] /dev/fd/3", then one line per
// string match, "0xOFFSET:$ID: DATA". Lines of any length are read; only
// their first 64 KiB count.
func parseOutput(r io.Reader) ([]*match, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var ms []*match
	var cur *match
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ms, nil
			}
			return ms, err
		}
		switch {
		case strings.HasPrefix(line, "0x"): // rule names never start with a digit
			if cur == nil {
				continue
			}
			off, id, data, ok := parseString(line)
			if ok && (cur.off < 0 || off < cur.off) {
				cur.off, cur.str, cur.data = off, id, data
			}
		case strings.HasSuffix(line, " "+target):
			m, ok := parseRule(strings.TrimSuffix(line, " "+target))
			if !ok {
				return ms, fmt.Errorf("unexpected line %q", line)
			}
			ms = append(ms, m)
			cur = m
		}
	}
}

// readLine returns the next line without its line break, cut at the
// reader's buffer size.
func readLine(br *bufio.Reader) (string, error) {
	b, err := br.ReadSlice('\n')
	line := string(bytes.TrimSuffix(b, []byte{'\n'}))
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = br.ReadSlice('\n') // the rest of a long line is dropped
	}
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		return "", err
	}
	return line, nil
}

// parseString parses "0xOFFSET:$ID: DATA".
func parseString(line string) (off int64, id, data string, ok bool) {
	hex, rest, ok1 := strings.Cut(line[2:], ":")
	id, data, ok2 := strings.Cut(rest, ": ")
	if !ok1 || !ok2 {
		return 0, "", "", false
	}
	off, err := strconv.ParseInt(hex, 16, 64)
	if err != nil || off < 0 {
		return 0, "", "", false
	}
	return off, id, data, true
}

// parseRule parses "RULE [TAGS] [META]".
func parseRule(s string) (*match, bool) {
	name, rest, ok := strings.Cut(s, " [")
	if !ok || name == "" {
		return nil, false
	}
	tags, rest, ok := strings.Cut(rest, "]")
	if !ok {
		return nil, false
	}
	m := &match{rule: name, off: -1, meta: map[string]string{}}
	for t := range strings.SplitSeq(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			m.tags = append(m.tags, t)
		}
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "[") || !strings.HasSuffix(rest, "]") {
		return nil, false
	}
	m.meta = parseMeta(rest[1 : len(rest)-1])
	return m, true
}

// parseMeta parses yara's printed metadata: key=value pairs separated by
// ",", a string value in double quotes with C escapes (\n, \", \\, octal
// \303 and hex \xc3), others (numbers, booleans) bare.
func parseMeta(s string) map[string]string {
	meta := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		k = strings.TrimSpace(k)
		rest = strings.TrimLeft(rest, " ")
		var v string
		if strings.HasPrefix(rest, `"`) {
			v, rest = unquote(rest[1:])
		} else {
			v, rest, _ = strings.Cut(rest, ",")
			v = strings.TrimSpace(v)
			rest = "," + rest
		}
		if _, dup := meta[k]; !dup {
			meta[k] = v
		}
		_, s, _ = strings.Cut(rest, ",")
	}
	return meta
}

// unquote reads a string up to its closing quote, undoing yara's escapes;
// it returns the string and what follows the quote.
func unquote(s string) (string, string) {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return string(b), s[i+1:]
		case c != '\\' || i+1 == len(s):
			b = append(b, c)
		default:
			i++
			switch e := s[i]; {
			case e == 'n':
				b = append(b, '\n')
			case e == 't':
				b = append(b, '\t')
			case e == 'r':
				b = append(b, '\r')
			case e == 'x' && i+2 < len(s):
				if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b = append(b, byte(v))
					i += 2
				} else {
					b = append(b, '\\', e)
				}
			case e >= '0' && e <= '7' && i+2 < len(s):
				if v, err := strconv.ParseUint(s[i:i+3], 8, 8); err == nil {
					b = append(b, byte(v))
					i += 2
				} else {
					b = append(b, '\\', e)
				}
			default: // \" \\ and anything else: the character itself
				b = append(b, e)
			}
		}
	}
	return string(b), ""
}

// limited writes at most n bytes to w and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
