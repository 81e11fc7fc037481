package scanners

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/textsafe"
)

// Finding is one thing a scanner reported. Every string is the scanner's,
// bounded (MaxRuleLen …) and stripped of control and format characters.
type Finding struct {
	Rule     string `json:"rule"`     // the scanner's rule id ("unnamed" when it gave none)
	Severity string `json:"severity"` // the scanner's (verdict format, lowercased) or "error", "warn", "info" (SARIF)
	File     string `json:"file"`     // relative to the skill directory when inside it, "/"-separated; "" when not given
	Line     int    `json:"line"`     // 1-based; 0 when not given
	Message  string `json:"message"`
}

// ParseAnswer reads a scanner's answer in format (FormatVerdict or
// FormatSARIF; "" is FormatVerdict): its verdict (VerdictAllow,
// VerdictWarn or VerdictBlock) and findings (at most MaxFindings, never
// nil). root is the directory the scanner was given: absolute file paths
// and file: URIs inside it become relative to it (may be "").
//
// The answer is exactly one JSON value (surrounding white space and a
// UTF-8 byte order mark allowed). Unknown keys are ignored; strings may be
// given as numbers; "line" may be a number or a numeric string, and
// anything else there is 0.
//
// Verdict format: {"verdict": "allow"|"warn"|"block", "findings": [{"rule",
// "severity", "file", "line", "message"}]}; the verdict is required (case
// and surrounding space ignored), findings may be absent or null.
//
// SARIF 2.1.0: "version" must be "2.1.0" and "runs" an array. Each of
// runs[].results[] is a finding: rule from ruleId, else rule.id, else the
// id of tool.driver.rules[ruleIndex]; message.text (else .markdown); file
// and line from locations[0].physicalLocation: artifactLocation.uri
// (percent-decoded; a relative one is relative to root) and
// region.startLine. Level "error" is block and severity "error", "warning"
// is warn and "warn"; "note", "none", a missing or another level has no
// effect (severity "info"). The verdict is the strongest effect. SARIF
// suppressions are ignored: a skill's author could write them.
func ParseAnswer(format string, answer []byte, root string) (verdict string, findings []Finding, err error) {
	answer = bytes.TrimPrefix(answer, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(answer)) == 0 {
		return "", nil, errors.New("no answer")
	}
	switch format {
	case FormatVerdict, "":
		verdict, findings, err = parseVerdict(answer, root)
	case FormatSARIF:
		verdict, findings, err = parseSARIF(answer, root)
	default:
		return "", nil, fmt.Errorf("unknown format %q", format)
	}
	if err != nil {
		return "", nil, err
	}
	return verdict, capFindings(findings), nil
}

type verdictAnswer struct {
	Verdict  *text            `json:"verdict"`
	Findings []*verdictResult `json:"findings"`
}

type verdictResult struct {
	Rule     text    `json:"rule"`
	Severity text    `json:"severity"`
	File     text    `json:"file"`
	Line     lineNum `json:"line"`
	Message  text    `json:"message"`
}

func parseVerdict(answer []byte, root string) (string, []Finding, error) {
	var a verdictAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return "", nil, fmt.Errorf("not a verdict answer: %s", jsonError(err))
	}
	if a.Verdict == nil {
		return "", nil, errors.New(`not a verdict answer: no "verdict"`)
	}
	v := strings.ToLower(strings.TrimSpace(string(*a.Verdict)))
	switch v {
	case VerdictAllow, VerdictWarn, VerdictBlock:
	default:
		return "", nil, fmt.Errorf(`"verdict" must be "allow", "warn" or "block", got %s`, strconv.Quote(clean(string(*a.Verdict), 40)))
	}
	rs := roots(root)
	fs := make([]Finding, 0, min(len(a.Findings), MaxFindings))
	for _, r := range a.Findings {
		if r == nil {
			continue
		}
		fs = append(fs, Finding{
			Rule:     ruleName(string(r.Rule)),
			Severity: strings.ToLower(clean(string(r.Severity), MaxSeverityLen)),
			File:     relFile(string(r.File), rs, false),
			Line:     int(r.Line),
			Message:  clean(string(r.Message), MaxMessageLen),
		})
	}
	return v, fs, nil
}

type sarifLog struct {
	Version *text       `json:"version"`
	Runs    *[]sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool struct {
		Driver struct {
			Rules []struct {
				ID text `json:"id"`
			} `json:"rules"`
		} `json:"driver"`
	} `json:"tool"`
	Results []*sarifResult `json:"results"`
}

type sarifResult struct {
	RuleID    text `json:"ruleId"`
	RuleIndex *int `json:"ruleIndex"`
	Rule      struct {
		ID    text `json:"id"`
		Index *int `json:"index"`
	} `json:"rule"`
	Level   text `json:"level"`
	Message struct {
		Text     text `json:"text"`
		Markdown text `json:"markdown"`
	} `json:"message"`
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI text `json:"uri"`
			} `json:"artifactLocation"`
			Region struct {
				StartLine lineNum `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
}

func parseSARIF(answer []byte, root string) (string, []Finding, error) {
	var l sarifLog
	if err := json.Unmarshal(answer, &l); err != nil {
		return "", nil, fmt.Errorf("not a SARIF log: %s", jsonError(err))
	}
	if l.Version == nil || string(*l.Version) != "2.1.0" {
		got := "none"
		if l.Version != nil {
			got = strconv.Quote(clean(string(*l.Version), 40))
		}
		return "", nil, fmt.Errorf(`not a SARIF 2.1.0 log: "version" is %s`, got)
	}
	if l.Runs == nil {
		return "", nil, errors.New(`not a SARIF log: no "runs"`)
	}
	rs := roots(root)
	verdict := VerdictAllow
	var fs []Finding
	for _, run := range *l.Runs {
		for _, r := range run.Results {
			if r == nil {
				continue
			}
			id := string(r.RuleID)
			if id == "" {
				id = string(r.Rule.ID)
			}
			idx := r.RuleIndex
			if idx == nil {
				idx = r.Rule.Index
			}
			if id == "" && idx != nil && *idx >= 0 && *idx < len(run.Tool.Driver.Rules) {
				id = string(run.Tool.Driver.Rules[*idx].ID)
			}
			sev := "info"
			switch strings.ToLower(strings.TrimSpace(string(r.Level))) {
			case "error":
				sev, verdict = "error", VerdictBlock
			case "warning":
				sev = "warn"
				if verdict == VerdictAllow {
					verdict = VerdictWarn
				}
			}
			msg := string(r.Message.Text)
			if msg == "" {
				msg = string(r.Message.Markdown)
			}
			f := Finding{Rule: ruleName(id), Severity: sev, Message: clean(msg, MaxMessageLen)}
			if len(r.Locations) > 0 {
				pl := r.Locations[0].PhysicalLocation
				f.File = relFile(string(pl.ArtifactLocation.URI), rs, true)
				f.Line = int(pl.Region.StartLine)
			}
			fs = append(fs, f)
		}
	}
	if fs == nil {
		fs = []Finding{}
	}
	return verdict, fs, nil
}

// capFindings keeps at most MaxFindings, in order, dropping "info" ones
// first so that what has an effect stays.
func capFindings(fs []Finding) []Finding {
	if len(fs) <= MaxFindings {
		return fs
	}
	strong := 0
	for _, f := range fs {
		if f.Severity != "info" {
			strong++
		}
	}
	infos := max(MaxFindings-strong, 0)
	out := make([]Finding, 0, MaxFindings)
	for _, f := range fs {
		if len(out) == MaxFindings {
			break
		}
		if f.Severity == "info" {
			if infos == 0 {
				continue
			}
			infos--
		}
		out = append(out, f)
	}
	return out
}

// ruleName is a scanner's rule id as kept: cleaned, "unnamed" when empty.
func ruleName(s string) string {
	if s = clean(s, MaxRuleLen); s == "" {
		return "unnamed"
	}
	return s
}

// relFile turns a scanner's file (a path, or with uri a URI reference)
// into a path relative to the root (rs: its spellings, from roots) when it
// is inside it, cleaned and bounded. A path elsewhere stays as given
// (cleaned).
func relFile(s string, rs []string, uri bool) string {
	if s == "" {
		return ""
	}
	if strings.HasPrefix(strings.ToLower(s), "file:") {
		if u, err := url.Parse(s); err == nil && u.Path != "" {
			s = u.Path
		}
	} else if uri && !strings.Contains(s, ":") {
		if p, err := url.PathUnescape(s); err == nil {
			s = p
		}
	}
	if strings.HasPrefix(s, "/") {
		s = path.Clean(s)
		for _, r := range rs {
			if s == r {
				return ""
			}
			if rest, ok := strings.CutPrefix(s, r+"/"); ok {
				return clean(rest, MaxFileLen)
			}
		}
		return clean(s, MaxFileLen)
	}
	if strings.Contains(s, ":") && uri {
		return clean(s, MaxFileLen) // another scheme: kept as given
	}
	s = path.Clean(s)
	if s == "." {
		return ""
	}
	return clean(s, MaxFileLen)
}

// roots returns root and, when it differs, root with symbolic links
// resolved ("/tmp" may be a link), both cleaned; none for "".
func roots(root string) []string {
	if root == "" {
		return nil
	}
	rs := []string{filepath.ToSlash(filepath.Clean(root))}
	if r, err := filepath.EvalSymlinks(root); err == nil && filepath.ToSlash(r) != rs[0] {
		rs = append(rs, filepath.ToSlash(r))
	}
	return rs
}

// clean makes a scanner's string safe to keep and show: valid UTF-8,
// tabs and line breaks as spaces, other control and invisible characters
// (textsafe.IsUnsafe: bidirectional overrides, zero-width marks, tag
// characters) removed, surrounding space
// trimmed, and at most max bytes (cut at a character, ending in "…").
func clean(s string, max int) string {
	var b strings.Builder
	b.Grow(min(len(s), max+8))
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029:
			b.WriteByte(' ')
		case textsafe.IsUnsafe(r):
		default:
			b.WriteRune(r)
		}
		if b.Len() > 4*max+8 {
			break // enough to cut from
		}
	}
	out := strings.TrimSpace(b.String())
	if len(out) <= max {
		return out
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return strings.TrimSpace(out[:cut]) + "…"
}

// text is a JSON string, or a number or boolean taken as its literal;
// null is "". Objects and arrays are refused.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
	case string(b) == "null":
		*t = ""
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return errors.New("a string was expected, got a JSON object or array")
	default:
		*t = text(b)
	}
	return nil
}

// lineNum is a 1-based line: a JSON number (truncated) or a numeric
// string; anything else, or a value out of range, is 0.
type lineNum int

func (l *lineNum) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) > 1 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			s = strings.TrimSpace(u)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 1 || f > 1<<31-1 {
		*l = 0
		return nil
	}
	*l = lineNum(f)
	return nil
}

// jsonError says what is wrong with an answer in a few words.
func jsonError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s is a JSON %s", te.Field, te.Value)
		}
		return fmt.Sprintf("a JSON %s where an object was expected", te.Value)
	}
	return err.Error()
}
