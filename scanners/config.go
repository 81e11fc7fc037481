package scanners

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is one external scanner: one entry of gateway.governance.scanners.
// The zero values of Timeout, FailClosed and Format mean their defaults.
type Config struct {
	// Name names the scanner in results, reasons and rule names
	// ("<name>:<rule>"): letters, digits, ".", "_" and "-", at most 64
	// bytes, starting with a letter or digit; unique in a list.
	Name string
	// Exec is the program (an absolute path to an executable file) and its
	// arguments. An argument that is exactly "{dir}" (DirArg) is replaced by
	// the root of the skill's private copy; "{dir}" inside a longer
	// argument is refused. The program also starts in that directory.
	Exec []string
	// Timeout bounds one run, from the start of the process to the end of
	// its answer; 0 means DefaultTimeout (30s). At most MaxTimeout.
	Timeout time.Duration
	// FailClosed: when the scanner fails (timeout, crash, no or an
	// unreadable answer), the skill is quarantined. nil means true; false
	// makes a failure a warn finding "scanner-failed" that does not hold.
	FailClosed *bool
	// Format is FormatVerdict (also for "") or FormatSARIF.
	Format string
	// PassEnv are names of the gateway's environment variables passed to
	// the scanner when set (besides PATH, which always is).
	PassEnv []string
}

// IsFailClosed reports whether a failure of the scanner holds the skill
// (FailClosed, true when not set).
func (c *Config) IsFailClosed() bool { return c.FailClosed == nil || *c.FailClosed }

// timeout returns Timeout or its default.
func (c *Config) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// format returns Format or its default.
func (c *Config) format() string {
	if c.Format == "" {
		return FormatVerdict
	}
	return c.Format
}

// FieldError is a refused value of a Config: Path is the setting's full
// key path ("gateway.governance.scanners[1].exec[0]"), Msg what was
// expected and what was found.
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Validate checks one scanner's settings, prefix being its key path
// ("gateway.governance.scanners[1]"): each refused value is a *FieldError
// naming its field, joined with errors.Join (nil when all is well). It
// looks at the file system: exec[0] must exist and be an executable
// regular file (after symbolic links).
func (c *Config) Validate(prefix string) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Path: prefix + field, Msg: fmt.Sprintf(format, args...)})
	}
	if !validName(c.Name) {
		bad(".name", "must be a name of letters, digits, \".\", \"_\" and \"-\" that starts with a letter or digit (at most %d bytes), got %s", MaxNameLen, strconv.Quote(c.Name))
	}
	if len(c.Exec) == 0 {
		bad(".exec", "must be the scanner program's absolute path and its arguments, such as [\"/usr/local/bin/scan-yara\", \"{dir}\"], got an empty list")
	}
	for i, a := range c.Exec {
		field := fmt.Sprintf(".exec[%d]", i)
		switch {
		case strings.IndexByte(a, 0) >= 0:
			bad(field, "must not contain a NUL byte, got %s", strconv.Quote(a))
		case a != DirArg && strings.Contains(a, DirArg):
			bad(field, "%s must be a whole argument (it is replaced by the skill directory's path only then), got %s", DirArg, strconv.Quote(a))
		case i == 0:
			if msg := checkProgram(a); msg != "" {
				bad(field, "%s", msg)
			}
		}
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		bad(".timeout", "must be a duration from 1ms to %v (30s when not set), got %v", MaxTimeout, c.Timeout)
	}
	if c.Format != "" && c.Format != FormatVerdict && c.Format != FormatSARIF {
		bad(".format", "must be one of %q, %q, got %s", FormatVerdict, FormatSARIF, strconv.Quote(c.Format))
	}
	for i, n := range c.PassEnv {
		if !validEnvName(n) {
			bad(fmt.Sprintf(".passEnv[%d]", i), "must be an environment variable's name (letters, digits and \"_\", not starting with a digit), got %s", strconv.Quote(n))
		}
	}
	return errors.Join(errs...)
}

// ValidateList checks a list of scanners, prefix being the list's key path
// ("gateway.governance.scanners"): each one as Validate does (with the
// prefix "<prefix>[i]"), and that no two share a name.
func ValidateList(prefix string, cs []Config) error {
	var errs []error
	first := make(map[string]int, len(cs))
	for i := range cs {
		p := fmt.Sprintf("%s[%d]", prefix, i)
		if err := cs[i].Validate(p); err != nil {
			errs = append(errs, err)
		}
		if j, dup := first[cs[i].Name]; dup && cs[i].Name != "" {
			errs = append(errs, &FieldError{Path: p + ".name", Msg: fmt.Sprintf("must be unique: %s is already the name of %s[%d]", strconv.Quote(cs[i].Name), prefix, j)})
		} else if !dup {
			first[cs[i].Name] = i
		}
	}
	return errors.Join(errs...)
}

// checkProgram returns why path cannot be a scanner's program, or "".
func checkProgram(path string) string {
	if !filepath.IsAbs(path) {
		return fmt.Sprintf("must be an absolute path to the scanner program, got %s", strconv.Quote(path))
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("no such file: %s", path)
	case err != nil:
		return fmt.Sprintf("cannot use %s: %v", path, errors.Unwrap(err))
	case !st.Mode().IsRegular():
		return fmt.Sprintf("%s is not a regular file (%v)", path, st.Mode().Type())
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Sprintf("%s is not executable (mode %v)", path, st.Mode().Perm())
	}
	return ""
}

func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// configJSON is Config as the config file writes it.
type configJSON struct {
	Name       string   `json:"name"`
	Exec       []string `json:"exec"`
	Timeout    string   `json:"timeout,omitempty"`
	FailClosed *bool    `json:"failClosed,omitempty"`
	Format     string   `json:"format,omitempty"`
	PassEnv    []string `json:"passEnv,omitempty"`
}

// MarshalJSON writes the config file's form: {"name", "exec", "timeout":
// "10s", "failClosed", "format", "passEnv"}, unset fields left out.
func (c Config) MarshalJSON() ([]byte, error) {
	j := configJSON{Name: c.Name, Exec: c.Exec, FailClosed: c.FailClosed, Format: c.Format, PassEnv: c.PassEnv}
	if c.Timeout != 0 {
		j.Timeout = c.Timeout.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the config file's form (see MarshalJSON); "timeout"
// is a Go duration string ("10s", "1m30s"). An unknown key is refused.
// It does not validate: call Validate.
func (c *Config) UnmarshalJSON(b []byte) error {
	var j configJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return err
	}
	var t time.Duration
	if j.Timeout != "" {
		var err error
		if t, err = time.ParseDuration(j.Timeout); err != nil {
			return fmt.Errorf("timeout: must be a duration such as \"10s\", got %s", strconv.Quote(j.Timeout))
		}
	}
	*c = Config{Name: j.Name, Exec: j.Exec, Timeout: t, FailClosed: j.FailClosed, Format: j.Format, PassEnv: j.PassEnv}
	return nil
}

// Fingerprint identifies the scanner's settings with the defaults filled
// in: answers cached under one fingerprint are not reused under another,
// so a changed setting rescans every skill with that scanner once. It is
// "sha256:<hex>" over every field (a scanner's own files, such as its
// rules, are not covered: a restart or a changed argument rescans).
func (c *Config) Fingerprint() string {
	h := sha256.New()
	field := func(s string) {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	field(c.Name)
	fmt.Fprintf(h, "%d[", len(c.Exec))
	for _, a := range c.Exec {
		field(a)
	}
	field(c.timeout().String())
	field(strconv.FormatBool(c.IsFailClosed()))
	field(c.format())
	fmt.Fprintf(h, "%d[", len(c.PassEnv))
	for _, n := range c.PassEnv {
		field(n)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
