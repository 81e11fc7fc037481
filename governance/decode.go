package governance

import (
	"encoding/ascii85"
	"encoding/base32"
	"strings"
)

// decodeB32 decodes standard base32, padded or not.
func decodeB32(s string) ([]byte, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if b, err := base32.StdEncoding.DecodeString(s); err == nil {
		return b, true
	}
	if b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimRight(s, "=")); err == nil {
		return b, true
	}
	return nil, false
}

// decodeA85 decodes Ascii85 (Adobe's, Python's a85), with or without its
// <~ ~> frame.
func decodeA85(s string) ([]byte, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "<~"), "~>")
	dst := make([]byte, 4*len(s)/5+4)
	n, _, err := ascii85.Decode(dst, []byte(s), true)
	if err != nil {
		return nil, false
	}
	return dst[:n], true
}

// b85Alphabet is RFC 1924's, which Python's base64.b85encode and git use.
const b85Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// decodeB85 decodes RFC 1924 base85.
func decodeB85(s string) ([]byte, bool) {
	var val [256]int
	for i := range val {
		val[i] = -1
	}
	for i := 0; i < len(b85Alphabet); i++ {
		val[b85Alphabet[i]] = i
	}
	var out []byte
	for i := 0; i < len(s); i += 5 {
		chunk := s[i:min(i+5, len(s))]
		pad := 5 - len(chunk)
		var acc uint64
		for k := 0; k < 5; k++ {
			c := byte('~') // pads with the highest digit
			if k < len(chunk) {
				c = chunk[k]
			}
			v := val[c]
			if v < 0 {
				return nil, false
			}
			acc = acc*85 + uint64(v)
		}
		if acc > 0xFFFFFFFF {
			return nil, false
		}
		b := []byte{byte(acc >> 24), byte(acc >> 16), byte(acc >> 8), byte(acc)}
		out = append(out, b[:4-pad]...)
	}
	return out, true
}
