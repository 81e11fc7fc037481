package scanners

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "scan")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(prog, link); err != nil {
		t.Fatal(err)
	}
	const p = "gateway.governance.scanners[1]"
	tests := []struct {
		name string
		cfg  Config
		errs []string
	}{
		{"minimal", Config{Name: "yara", Exec: []string{prog, "{dir}"}}, nil},
		{"everything", Config{Name: "clam-av_2.0", Exec: []string{link, "-x", "{dir}", "{dir}"}, Timeout: MaxTimeout,
			FailClosed: new(false), Format: FormatSARIF, PassEnv: []string{"API_KEY", "_X1"}}, nil},
		{"no {dir}: the program starts in it", Config{Name: "y", Exec: []string{prog}}, nil},
		{"relative program", Config{Name: "yara", Exec: []string{"scan-yara", "{dir}"}},
			[]string{p + `.exec[0]: must be an absolute path to the scanner program, got "scan-yara"`}},
		{"missing program", Config{Name: "yara", Exec: []string{"/usr/local/bin/no-such-scanner"}},
			[]string{p + `.exec[0]: no such file: /usr/local/bin/no-such-scanner`}},
		{"not executable", Config{Name: "yara", Exec: []string{plain}},
			[]string{p + `.exec[0]: ` + plain + ` is not executable (mode -rw-r--r--)`}},
		{"a directory", Config{Name: "yara", Exec: []string{dir}},
			[]string{p + `.exec[0]: ` + dir + ` is not a regular file (d---------)`}},
		{"program is {dir}", Config{Name: "yara", Exec: []string{"{dir}"}},
			[]string{p + `.exec[0]: must be an absolute path to the scanner program, got "{dir}"`}},
		{"{dir} inside an argument", Config{Name: "yara", Exec: []string{prog, "--path={dir}", "{dir}/x", "{dir}"}},
			[]string{p + `.exec[1]: {dir} must be a whole argument (it is replaced by the skill directory's path only then), got "--path={dir}"`,
				p + `.exec[2]: {dir} must be a whole argument (it is replaced by the skill directory's path only then), got "{dir}/x"`}},
		{"NUL in an argument", Config{Name: "yara", Exec: []string{prog, "a\x00b"}},
			[]string{p + `.exec[1]: must not contain a NUL byte, got "a\x00b"`}},
		{"everything wrong", Config{Name: "", Exec: nil, Timeout: -time.Second, Format: "json", PassEnv: []string{"OK", "A=B", "1X", ""}},
			[]string{
				p + `.name: must be a name of letters, digits, ".", "_" and "-" that starts with a letter or digit (at most 64 bytes), got ""`,
				p + `.exec: must be the scanner program's absolute path and its arguments, such as ["/usr/local/bin/scan-yara", "{dir}"], got an empty list`,
				p + `.timeout: must be a duration from 1ms to 10m0s (30s when not set), got -1s`,
				p + `.format: must be one of "verdict", "sarif", got "json"`,
				p + `.passEnv[1]: must be an environment variable's name (letters, digits and "_", not starting with a digit), got "A=B"`,
				p + `.passEnv[2]: must be an environment variable's name (letters, digits and "_", not starting with a digit), got "1X"`,
				p + `.passEnv[3]: must be an environment variable's name (letters, digits and "_", not starting with a digit), got ""`,
			}},
		{"bad names", Config{Name: "a:b", Exec: []string{prog}},
			[]string{p + `.name: must be a name of letters, digits, ".", "_" and "-" that starts with a letter or digit (at most 64 bytes), got "a:b"`}},
		{"name starting with a dash", Config{Name: "-x", Exec: []string{prog}},
			[]string{p + `.name: must be a name of letters, digits, ".", "_" and "-" that starts with a letter or digit (at most 64 bytes), got "-x"`}},
		{"timeout too long", Config{Name: "x", Exec: []string{prog}, Timeout: time.Hour},
			[]string{p + `.timeout: must be a duration from 1ms to 10m0s (30s when not set), got 1h0m0s`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := errorLines(tc.cfg.Validate(p))
			if !reflect.DeepEqual(got, tc.errs) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.errs, "\n"))
			}
		})
	}
}

// errorLines returns each FieldError of a joined error as a line.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var fe *FieldError
		if !errors.As(e, &fe) {
			out = append(out, "not a FieldError: "+e.Error())
			return
		}
		out = append(out, fe.Error())
	}
	walk(err)
	return out
}

func TestValidateList(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "scan")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs := []Config{
		{Name: "yara", Exec: []string{prog, "{dir}"}},
		{Name: "other", Exec: []string{"rel"}},
		{Name: "yara", Exec: []string{prog}},
		{Name: "yara", Exec: []string{prog}},
	}
	want := []string{
		`gateway.governance.scanners[1].exec[0]: must be an absolute path to the scanner program, got "rel"`,
		`gateway.governance.scanners[2].name: must be unique: "yara" is already the name of gateway.governance.scanners[0]`,
		`gateway.governance.scanners[3].name: must be unique: "yara" is already the name of gateway.governance.scanners[0]`,
	}
	if got := errorLines(ValidateList("gateway.governance.scanners", cs)); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := ValidateList("s", cs[:1]); err != nil {
		t.Error(err)
	}
	if err := ValidateList("s", nil); err != nil {
		t.Error(err)
	}
}

func TestConfigJSON(t *testing.T) {
	in := `{"name": "yara", "exec": ["/usr/local/bin/scan-yara", "{dir}"], "timeout": "10s", "failClosed": false, "format": "sarif", "passEnv": ["NAME"]}`
	var c Config
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	want := Config{Name: "yara", Exec: []string{"/usr/local/bin/scan-yara", "{dir}"}, Timeout: 10 * time.Second,
		FailClosed: new(false), Format: FormatSARIF, PassEnv: []string{"NAME"}}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v", c)
	}
	if c.IsFailClosed() {
		t.Error("failClosed false read as true")
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"name":"yara","exec":["/usr/local/bin/scan-yara","{dir}"],"timeout":"10s","failClosed":false,"format":"sarif","passEnv":["NAME"]}` {
		t.Errorf("marshal: %s", out)
	}
	var d Config
	if err := json.Unmarshal([]byte(`{"name": "y", "exec": ["/x"]}`), &d); err != nil {
		t.Fatal(err)
	}
	if !d.IsFailClosed() || d.timeout() != DefaultTimeout || d.format() != FormatVerdict {
		t.Errorf("defaults: %+v", d)
	}
	for _, bad := range []string{`{"name": "y", "exec": ["/x"], "timeout": "10"}`, `{"name": "y", "exec": ["/x"], "failclosed": true, "extra": 1}`, `[]`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := Config{Name: "yara", Exec: []string{"/s", "{dir}"}}
	same := []Config{
		base,
		{Name: "yara", Exec: []string{"/s", "{dir}"}, Timeout: DefaultTimeout, FailClosed: new(true), Format: FormatVerdict},
	}
	differ := []Config{
		{Name: "yara2", Exec: []string{"/s", "{dir}"}},
		{Name: "yara", Exec: []string{"/s", "{dir}", "x"}},
		{Name: "yara", Exec: []string{"/s{dir}"}},
		{Name: "yara", Exec: []string{"/s", "{dir}"}, Timeout: time.Second},
		{Name: "yara", Exec: []string{"/s", "{dir}"}, FailClosed: new(false)},
		{Name: "yara", Exec: []string{"/s", "{dir}"}, Format: FormatSARIF},
		{Name: "yara", Exec: []string{"/s", "{dir}"}, PassEnv: []string{"A"}},
	}
	fp := base.Fingerprint()
	if !strings.HasPrefix(fp, "sha256:") || len(fp) != 7+64 {
		t.Fatalf("fingerprint %q", fp)
	}
	for _, c := range same {
		if c.Fingerprint() != fp {
			t.Errorf("%+v: a different fingerprint", c)
		}
	}
	seen := map[string]bool{fp: true}
	for _, c := range differ {
		f := c.Fingerprint()
		if seen[f] {
			t.Errorf("%+v: fingerprint not unique", c)
		}
		seen[f] = true
	}
}
