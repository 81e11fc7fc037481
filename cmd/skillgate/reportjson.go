package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// writeReportJSON writes rep byte for byte as a json.Encoder with
// SetIndent("", "  ") and SetEscapeHTML(false) writes it, as a stream. At
// 1,000 skills and 10,000 hosts the host lists are most of a 16 MB answer:
// the encoder would build all of it in memory and then indent it in a
// second copy, which took longer than the evaluation. Here everything but
// the host lists still goes through encoding/json (skill by skill), and
// each host id is written as encoding/json quotes it.
func writeReportJSON(w io.Writer, rep *report.Report) error {
	if len(rep.Skills) == 0 {
		return encodeAll(w, rep) // small, and "[]" is not a list of steps
	}
	rw := newReportWriter(w)
	rw.head(rep.Agent)
	for i := range rep.Skills {
		rw.skill(&rep.Skills[i])
	}
	return rw.tail(rep.Prompt, rep.Diagnostics)
}

// reportWriter writes a report in three steps, so that eval can write the
// first skills while it evaluates the others: head, each skill (at least
// one), tail. It appends to a buffer that it writes out every 256 KiB; the
// first error is kept and returned by tail.
type reportWriter struct {
	w   io.Writer
	buf []byte
	enc *json.Encoder // into encBuf, as the report's encoder
	n   int           // skills written
	err error

	encBuf bytes.Buffer
}

func newReportWriter(w io.Writer) *reportWriter {
	rw := &reportWriter{w: w, buf: make([]byte, 0, 256<<10)}
	rw.enc = json.NewEncoder(&rw.encBuf)
	rw.enc.SetEscapeHTML(false)
	return rw
}

// encode encodes v as the report's encoder does, lines after the first
// prefixed with prefix; the result is valid until the next call.
func (rw *reportWriter) encode(v any, prefix string) ([]byte, error) {
	rw.encBuf.Reset()
	rw.enc.SetIndent(prefix, "  ")
	err := rw.enc.Encode(v)
	return rw.encBuf.Bytes(), err
}

// flush writes the buffer out once it is full, or at the end.
func (rw *reportWriter) flush(end bool) {
	if rw.err == nil && (end || len(rw.buf) >= 256<<10) {
		_, rw.err = rw.w.Write(rw.buf)
		rw.buf = rw.buf[:0]
	}
}

// skillsMarker is "skills" in a report encoded with Skills nil; it cannot
// occur earlier in it, as encoded strings hold no raw newline.
const skillsMarker = "\n  \"skills\": null,\n"

// head writes the report up to the "skills" list.
func (rw *reportWriter) head(agent string) {
	b, err := rw.encode(&report.Report{Agent: agent}, "")
	i := bytes.Index(b, []byte(skillsMarker))
	if err == nil && i < 0 {
		err = errors.New("eval: unexpected encoding of the report")
	}
	if err != nil {
		rw.err = err
		return
	}
	rw.buf = append(rw.buf, b[:i+len(skillsMarker)-len("null,\n")]...)
	rw.buf = append(rw.buf, "[\n"...)
}

// hostsMarker is the "hosts" member of a SkillReport encoded with Hosts
// nil, at the indentation of a skill's members: members of the "filtered"
// objects are indented deeper, and encoded strings hold no raw newline,
// so it occurs once.
const hostsMarker = "\n      \"hosts\": null"

// skill writes the next element of the "skills" list: encoding/json for
// all but the hosts, then the host ids, each quoted as encoding/json
// quotes it, then the members after "hosts" ("filtered") as encoding/json
// wrote them.
func (rw *reportWriter) skill(s *report.SkillReport) {
	if rw.err != nil {
		return
	}
	if rw.n > 0 {
		rw.buf = append(rw.buf, ",\n"...)
	}
	rw.n++
	rw.buf = append(rw.buf, "    "...)
	sk := *s
	sk.Hosts = nil
	b, err := rw.encode(&sk, "    ")
	if err != nil {
		rw.err = err
		return
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	i := bytes.Index(b, []byte(hostsMarker))
	if i < 0 {
		// Not the expected encoding: stay exact, if slower.
		if b, rw.err = rw.encode(s, "    "); rw.err == nil {
			rw.buf = append(rw.buf, bytes.TrimSuffix(b, []byte("\n"))...)
		}
		return
	}
	i += len(hostsMarker) - len("null")
	rw.buf = append(rw.buf, b[:i]...)
	// What follows the hosts, kept apart: appendString may encode again.
	rest := bytes.Clone(b[i+len("null"):])
	switch {
	case s.Hosts == nil:
		rw.buf = append(rw.buf, "null"...)
	case len(s.Hosts) == 0:
		rw.buf = append(rw.buf, "[]"...)
	default:
		rw.buf = append(rw.buf, "[\n"...)
		for j, h := range s.Hosts {
			rw.buf = append(rw.buf, "        "...)
			rw.appendString(h)
			if j < len(s.Hosts)-1 {
				rw.buf = append(rw.buf, ',')
			}
			rw.buf = append(rw.buf, '\n')
			rw.flush(false)
		}
		rw.buf = append(rw.buf, "      ]"...)
	}
	rw.buf = append(rw.buf, rest...)
	rw.flush(false)
}

// appendString appends s quoted as encoding/json quotes it without HTML
// escaping: printable ASCII other than '"' and '\' as is (host ids nearly
// always are), anything else through encoding/json.
func (rw *reportWriter) appendString(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, err := rw.encode(s, "")
			if err != nil {
				rw.err = err
			}
			rw.buf = append(rw.buf, bytes.TrimSuffix(b, []byte("\n"))...)
			return
		}
	}
	rw.buf = append(rw.buf, '"')
	rw.buf = append(rw.buf, s...)
	rw.buf = append(rw.buf, '"')
}

// tail ends the "skills" list, writes the rest and flushes.
func (rw *reportWriter) tail(prompt string, diags []skill.Diagnostic) error {
	if rw.err != nil {
		return rw.err
	}
	if rw.n == 0 {
		return errors.New("eval: a report written in steps needs at least one skill")
	}
	b, err := rw.encode(&report.Report{Prompt: prompt, Diagnostics: diags}, "")
	i := bytes.Index(b, []byte(skillsMarker))
	if err == nil && i < 0 {
		err = errors.New("eval: unexpected encoding of the report")
	}
	if err != nil {
		return err
	}
	rw.buf = append(rw.buf, "\n  ]"...)
	rw.buf = append(rw.buf, b[i+len(skillsMarker)-len(",\n"):]...)
	rw.flush(true)
	return rw.err
}

// encodeAll is the plain encoder, for reports writeReportJSON has no
// shortcut for.
func encodeAll(w io.Writer, rep *report.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}
