package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tailscale/hujson"
)

// MaxHuJSONFile bounds what ReadHuJSON reads (4 MiB, as the gateway's
// config file).
const MaxHuJSONFile = 4 << 20

// ReadHuJSON reads a HuJSON file (JSON with comments and trailing commas)
// and returns it as standard JSON, up to MaxHuJSONFile bytes. A read error is returned as it is; a
// file that is not HuJSON is an error naming the file.
func ReadHuJSON(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxHuJSONFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxHuJSONFile {
		return nil, fmt.Errorf("%s: larger than %d bytes; a config file is a few KiB", name, MaxHuJSONFile)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return std, nil
}

// NewHuJSONReader returns a reader of the standard JSON form of the HuJSON
// that r yields, for files too large to standardize whole; see
// huJSONReader.
func NewHuJSONReader(r io.Reader) io.Reader {
	return &huJSONReader{r: r, in: make([]byte, 64<<10)}
}

// huJSONReader standardizes HuJSON (JSON with comments and trailing
// commas, which hosts files have always accepted) into JSON as a stream,
// for files too large to standardize whole. Comments become spaces
// (newlines kept) and a trailing comma a space, so byte offsets in errors
// are those of the file; a comma followed by a comment is written after
// it, just before the next value. Anything else passes through unchanged,
// for the JSON decoder to judge.
type huJSONReader struct {
	r     io.Reader
	in    []byte
	buf   []byte // standardized bytes of the last chunk
	out   []byte // the part of buf not yet returned
	state int
	comma bool // a ',' held until the next significant byte shows whether it trails
	last  byte // the last significant byte written (0 before any): a ',' after '[', '{', ',' or ':' never trails
	slash bool // a '/' held: a comment opens if '/' or '*' follows
	err   error
}

// errUnclosedComment ends a stream whose last /* comment is not closed,
// which hujson refuses too.
var errUnclosedComment = errors.New("not valid HuJSON: a /* comment is not closed")

const (
	hjCode = iota
	hjString
	hjEscape
	hjLineComment
	hjBlockComment
	hjBlockStar // in a block comment, after '*'
)

func (h *huJSONReader) Read(p []byte) (int, error) {
	for len(h.out) == 0 {
		if h.err != nil {
			return 0, h.err
		}
		n, err := h.r.Read(h.in)
		h.buf = h.standardize(h.buf[:0], h.in[:n])
		if err != nil {
			h.err = err
			if err == io.EOF {
				// Held bytes are not HuJSON either way: the decoder says so.
				if h.slash {
					h.buf = append(h.buf, '/')
				}
				if h.comma {
					h.buf = append(h.buf, ',')
				}
				if h.state == hjBlockComment || h.state == hjBlockStar {
					h.err = errUnclosedComment
				}
			}
		}
		h.out = h.buf
	}
	n := copy(p, h.out)
	h.out = h.out[n:]
	return n, nil
}

// standardize appends the standard form of chunk to dst.
func (h *huJSONReader) standardize(dst, chunk []byte) []byte {
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		switch h.state {
		case hjString:
			// Most bytes are inside strings: copy up to the closing quote
			// or a backslash at once.
			j := i
			for j < len(chunk) && chunk[j] != '"' && chunk[j] != '\\' {
				j++
			}
			if j == len(chunk) {
				return append(dst, chunk[i:]...)
			}
			dst = append(dst, chunk[i:j+1]...)
			i = j
			if chunk[j] == '"' {
				h.state = hjCode
				h.last = '"'
			} else {
				h.state = hjEscape
			}
			continue
		case hjEscape:
			dst = append(dst, c)
			h.state = hjString
			continue
		case hjLineComment:
			if c == '\n' {
				h.state = hjCode
			}
			dst = append(dst, blank(c))
			continue
		case hjBlockComment, hjBlockStar:
			switch {
			case c == '/' && h.state == hjBlockStar:
				h.state = hjCode
			case c == '*':
				h.state = hjBlockStar
			default:
				h.state = hjBlockComment
			}
			dst = append(dst, blank(c))
			continue
		}
		if !h.slash && !h.comma {
			// Plain code: copy up to the next byte that needs a decision.
			j := i
			for j < len(chunk) && !hjSpecial[chunk[j]] {
				j++
			}
			dst = append(dst, chunk[i:j]...)
			for k := j - 1; k >= i; k-- {
				if b := chunk[k]; b != ' ' && b != '\t' && b != '\n' && b != '\r' {
					h.last = b
					break
				}
			}
			if j == len(chunk) {
				return dst
			}
			i, c = j, chunk[j]
		}
		if h.slash {
			h.slash = false
			switch c {
			case '/':
				h.state = hjLineComment
				dst = append(dst, ' ', ' ')
				continue
			case '*':
				h.state = hjBlockComment
				dst = append(dst, ' ', ' ')
				continue
			}
			dst = h.significant(dst, '/')
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			dst = append(dst, c)
		case '/':
			h.slash = true
		case ',':
			if h.comma {
				dst = append(dst, ',') // two in a row: let the decoder complain
				h.comma = false
				h.last = ','
			}
			if h.last == 0 || h.last == '[' || h.last == '{' || h.last == ',' || h.last == ':' {
				// Not after a value, so not a trailing comma: the decoder
				// refuses it, as hujson does.
				dst = append(dst, ',')
				h.last = ','
				continue
			}
			// Usually what follows is in this chunk: decide at once, so
			// that the comma stays in place.
			j := i + 1
			for j < len(chunk) && (chunk[j] == ' ' || chunk[j] == '\t' || chunk[j] == '\n' || chunk[j] == '\r') {
				j++
			}
			switch {
			case j == len(chunk) || chunk[j] == '/':
				h.comma = true // decided at the next significant byte
			case chunk[j] == ']' || chunk[j] == '}':
				dst = append(dst, ' ')
			default:
				dst = append(dst, ',')
				h.last = ','
			}
		default:
			dst = h.significant(dst, c)
			if c == '"' {
				h.state = hjString
			}
		}
	}
	return dst
}

// hjSpecial marks the bytes of code that standardize must look at: the
// others are copied as they are.
var hjSpecial = [256]bool{'"': true, '/': true, ',': true}

// significant appends a byte that is not space or a comment, deciding a
// held comma first: before ']' or '}' it trails and becomes a space.
func (h *huJSONReader) significant(dst []byte, c byte) []byte {
	if h.comma {
		h.comma = false
		if c == ']' || c == '}' {
			dst = append(dst, ' ')
		} else {
			dst = append(dst, ',')
		}
	}
	h.last = c
	return append(dst, c)
}

// blank is what a comment byte becomes: a space, or itself for a newline.
func blank(c byte) byte {
	if c == '\n' {
		return c
	}
	return ' '
}
