package cli

import (
	"io"
	"testing"
)

// TestFlagOverFile: a flag given on the command line wins over the file,
// even when given its default value or empty; otherwise the file's value,
// when the file sets the key; otherwise the flag's default.
func TestFlagOverFile(t *testing.T) {
	fs := NewFlagSet("prog", io.Discard)
	listen := fs.String("listen", "127.0.0.1:7780", "")
	store := fs.String("store", "", "")
	poll := fs.String("poll", "2s", "")
	id := fs.String("id", "", "")
	if err := fs.Parse([]string{"--listen", "127.0.0.1:7780", "--id", ""}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, flagVal, fileVal string
		inFile                 bool
		want                   string
		given                  bool
	}{
		{"listen", *listen, "0.0.0.0:1", true, "127.0.0.1:7780", true}, // given, at its default value
		{"id", *id, "file-id", true, "", true},                         // given empty
		{"store", *store, "/srv/skills", true, "/srv/skills", false},
		{"poll", *poll, "", false, "2s", false},
	} {
		if got := FlagOverFile(fs, tt.name, tt.flagVal, tt.fileVal, tt.inFile); got != tt.want {
			t.Errorf("FlagOverFile(%s) = %q, want %q", tt.name, got, tt.want)
		}
		if got := Given(fs, tt.name); got != tt.given {
			t.Errorf("Given(%s) = %v, want %v", tt.name, got, tt.given)
		}
	}
	if got := Source(fs, "store", "node.hujson", "store", true); got != "node.hujson: store" {
		t.Errorf("Source(store from the file) = %q", got)
	}
	if got := Source(fs, "id", "node.hujson", "id", true); got != "--id" {
		t.Errorf("Source(id given) = %q", got)
	}
	if got := Source(fs, "token-file", "node.hujson", "tokenFile", false); got != "--token-file" {
		t.Errorf("Source(token-file, not in the file) = %q", got)
	}
}
