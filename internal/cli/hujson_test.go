package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tailscale/hujson"
)

// TestHuJSONReader: comments and trailing commas become spaces (offsets
// kept), anything in strings is left alone, whatever the read sizes.
func TestHuJSONReader(t *testing.T) {
	tests := []struct{ in, want string }{
		{`[1, 2]`, `[1, 2]`},
		{"[1, 2, ]", "[1, 2  ]"},
		{"{\"a\": 1,\n}", "{\"a\": 1 \n}"},
		{"[1 // one\n, 2]", "[1       \n, 2]"},
		{"[1, /* x\n*/ 2,/**/]", "[1     \n   ,2     ]"},
		{`["http://x/*y*/", "a\"//b", "c\\"]`, `["http://x/*y*/", "a\"//b", "c\\"]`},
		{"[1,\n// last\n]", "[1\n       \n ]"},
		{"[1,,]", "[1,,]"}, // invalid: the decoder says so
		{"[,]", "[,]"},     // a comma after '[', '{', ',' or ':' never trails
		{"{ /* c */ ,}", "{         ,}"},
		{"[1 / 2]", "[1 / 2]"},
		{"[1,", "[1,"},
		{"/", "/"},
	}
	for _, tt := range tests {
		for _, one := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if one {
				r = iotest.OneByteReader(r)
			}
			got, err := io.ReadAll(NewHuJSONReader(r))
			switch {
			case err != nil:
				t.Errorf("%q: %v", tt.in, err)
			case !one && string(got) != tt.want:
				t.Errorf("%q: %q, want %q", tt.in, got, tt.want)
			case len(got) != len(tt.in) || !sameJSON(got, []byte(tt.want)):
				// A comma at the end of a read is written just before the
				// next value: the same JSON, the same length.
				t.Errorf("%q one byte at a time: %q, want the JSON of %q", tt.in, got, tt.want)
			}
		}
		if std, err := hujson.Standardize([]byte(tt.in)); err == nil && !sameJSON(std, []byte(tt.want)) {
			t.Errorf("%q: standardized as %q, hujson says %q", tt.in, tt.want, std)
		}
	}
}

// sameJSON reports whether a and b are the same JSON value, or both not
// JSON; whitespace does not count.
func sameJSON(a, b []byte) bool {
	var x, y any
	ea, eb := json.Unmarshal(a, &x), json.Unmarshal(b, &y)
	if ea != nil || eb != nil {
		return (ea != nil) == (eb != nil) && string(bytes.Join(bytes.Fields(a), nil)) == string(bytes.Join(bytes.Fields(b), nil))
	}
	return reflect.DeepEqual(x, y)
}

// TestReadHuJSON: a HuJSON file comes back as standard JSON; a file that
// is not HuJSON is an error naming it; a missing file is the OS's error.
func TestReadHuJSON(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hujson")
	os.WriteFile(good, []byte("{\"a\": [1, 2,], // c\n}"), 0o644)
	got, err := ReadHuJSON(good)
	// Comments and the trailing comma become spaces: offsets are kept.
	if want := "{\"a\": [1, 2 ]      \n}"; err != nil || string(got) != want {
		t.Errorf("ReadHuJSON(good) = %q, %v; want %q", got, err, want)
	}
	bad := filepath.Join(dir, "bad.hujson")
	os.WriteFile(bad, []byte("{\"a\": }"), 0o644)
	if _, err := ReadHuJSON(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Errorf("ReadHuJSON(bad): %v, want an error starting with %s: ", err, bad)
	}
	if _, err := ReadHuJSON(filepath.Join(dir, "absent")); !os.IsNotExist(err) {
		t.Errorf("ReadHuJSON(absent): %v, want a not-exist error", err)
	}
}

// FuzzHuJSONReader: on any HuJSON that hujson can read, the stream is the
// same JSON as hujson.Standardize makes of it, and as long.
func FuzzHuJSONReader(f *testing.F) {
	for _, s := range []string{"[1, /* c */ 2, // d\n]", `{"a": "//", "b": [1,],}`, "[\"\\\"/*\",\n]", "[,]", "{,}", `{"a":,1}`, "[1,,]", "[ /* c */ ,]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		std, err := hujson.Standardize([]byte(s))
		if err != nil || !json.Valid(std) {
			if strings.Contains(s, "/") {
				// hujson also judges what comments hold (UTF-8, a final
				// newline); the stream only blanks them.
				return
			}
			// What hujson refuses, the stream must not turn into JSON.
			if got, err := io.ReadAll(NewHuJSONReader(strings.NewReader(s))); err == nil && json.Valid(got) {
				t.Fatalf("%q: hujson refuses it, the stream makes valid JSON %q", s, got)
			}
			return
		}
		for _, one := range []bool{false, true} {
			var r io.Reader = strings.NewReader(s)
			if one {
				r = iotest.OneByteReader(r)
			}
			got, err := io.ReadAll(NewHuJSONReader(r))
			if err != nil || len(got) != len(s) || !sameJSON(got, std) {
				t.Fatalf("%q (one byte at a time %v): %q, %v; hujson: %q", s, one, got, err, std)
			}
		}
	})
}

func TestReadHuJSONBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.hujson")
	os.WriteFile(big, []byte("["+strings.Repeat(" ", MaxHuJSONFile)+"]"), 0o644)
	want := big + ": larger than 4194304 bytes; a config file is a few KiB"
	if _, err := ReadHuJSON(big); err == nil || err.Error() != want {
		t.Errorf("ReadHuJSON(big): %v, want %s", err, want)
	}
}
