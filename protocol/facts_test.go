package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalizeOS(t *testing.T) {
	tests := map[string]string{
		"darwin": "darwin", "macOS": "darwin", " osx ": "darwin", "Win32": "windows",
		"windows": "windows", "LINUX": "linux", "": "",
	}
	for in, want := range tests {
		if got := NormalizeOS(in); got != want {
			t.Errorf("NormalizeOS(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHostFactsValidate(t *testing.T) {
	valid := func() HostFacts {
		return HostFacts{ID: "mac-1", OS: "darwin", Roles: []string{RoleExecution},
			Capabilities: append([]string(nil), BaselineCapabilities...), Env: []string{"GITHUB_TOKEN"},
			HostBinStatus: map[string]bool{"gh": true}}
	}
	tests := []struct {
		name   string
		change func(*HostFacts)
		want   string // "" for valid
	}{
		{"valid", func(*HostFacts) {}, ""},
		{"specialized without capabilities", func(h *HostFacts) { h.Roles = []string{RoleSpecialized}; h.Capabilities = nil }, ""},
		{"empty id", func(h *HostFacts) { h.ID = "" }, "id: is empty"},
		{"long id", func(h *HostFacts) { h.ID = strings.Repeat("a", MaxIDLen+1) }, "id: is 129 bytes, more than 128"},
		{"backslash id", func(h *HostFacts) { h.ID = `a\b` }, "id: \"a\\\\b\" contains a slash or backslash"},
		{"dotdot id", func(h *HostFacts) { h.ID = "a..b" }, `id: "a..b" contains ".."`},
		{"control id", func(h *HostFacts) { h.ID = "a\x7f" }, `id: "a\x7f" contains a control character`},
		{"no os", func(h *HostFacts) { h.OS = " " }, "os: is empty (expected runtime.GOOS, e.g. linux or darwin)"},
		{"escape in os", func(h *HostFacts) { h.OS = "linux\x1b[2J" },
			`os: "linux\x1b[2J" is not a lowercase name of letters, digits, '.', '_' or '-' (expected runtime.GOOS, e.g. linux or darwin)`},
		{"long os", func(h *HostFacts) { h.OS = strings.Repeat("x", 33) }, "os: is 33 bytes, more than 32 (expected runtime.GOOS"},
		{"bidi id", func(h *HostFacts) { h.ID = "mac-1\u202e" }, `id: "mac-1\u202e" contains the invisible character U+202E`},
		{"no roles", func(h *HostFacts) { h.Roles = nil }, "roles: is empty"},
		{"bad role", func(h *HostFacts) { h.Roles = []string{"execution", "gpu"} }, `roles[1]: unknown role "gpu"`},
		{"bad capability", func(h *HostFacts) { h.Capabilities = append(h.Capabilities, "x") }, `capabilities[4]: unknown capability "x"`},
		{"missing baseline", func(h *HostFacts) { h.Capabilities = h.Capabilities[:3] },
			"capabilities: an execution host must have filesystem.list, filesystem.read, filesystem.write, shell.exec; missing shell.exec"},
		{"empty env name", func(h *HostFacts) { h.Env = []string{""} }, `env[0]: invalid name ""`},
		{"empty bin name", func(h *HostFacts) { h.HostBinStatus[""] = true }, `hostBinStatus: invalid binary name ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := valid()
			tt.change(&h)
			err := h.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("got %v, want %q…", err, tt.want)
			}
		})
	}
}

// TestValidateOS: an os is accepted when, after NormalizeOS, it is 1–32
// bytes of [a-z0-9._-] starting with a letter or digit; the error names
// the field and what was expected.
func TestValidateOS(t *testing.T) {
	tests := []struct {
		os   string
		want string // "" for valid
	}{
		// Every runtime.GOOS, and the spellings NormalizeOS folds.
		{"linux", ""}, {"darwin", ""}, {"windows", ""}, {"freebsd", ""}, {"wasip1", ""}, {"plan9", ""},
		{"Darwin", ""}, {"macOS", ""}, {"osx", ""}, {"win32", ""}, {"LINUX", ""}, {" linux\n", ""},
		{"my-os_1.2", ""}, {strings.Repeat("a", 32), ""},
		{"", "os: is empty"}, {"\t", "os: is empty"},
		{strings.Repeat("a", 33), "os: is 33 bytes, more than 32"},
		{"\x1b[2J\x07", `os: "\x1b[2J\a" is not a lowercase name`},   // ESC, BEL
		{"lin\rux", `os: "lin\rux" is not a lowercase name`},         // C0 inside
		{"linux\x7f", `os: "linux\x7f" is not a lowercase name`},     // DEL
		{"linux\u009b", `os: "linux\u009b" is not a lowercase name`}, // C1 CSI
		{"linux\u202e", `os: "linux\u202e" is not a lowercase name`}, // bidi override
		{"lin\u200bux", `os: "lin\u200bux" is not a lowercase name`}, // zero-width space
		{"linüx", `os: "linüx" is not a lowercase name`},             // non-ASCII
		{"linux 6.1", `os: "linux 6.1" is not a lowercase name`},     // space
		{"-linux", `os: "-linux" is not a lowercase name`},           // punctuation first
		{".", `os: "." is not a lowercase name`},                     //
		{"linux/amd64", `os: "linux/amd64" is not a lowercase name`}, // slash
		{"\xff", `os: "\xff" is not a lowercase name`},               // invalid UTF-8
	}
	for _, tt := range tests {
		h := HostFacts{ID: "h", OS: tt.os, Roles: []string{RoleSpecialized}}
		err := h.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("os %q: unexpected error: %v", tt.os, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want) ||
			!strings.HasSuffix(err.Error(), "(expected runtime.GOOS, e.g. linux or darwin)")):
			t.Errorf("os %q: got %v, want %q… (expected runtime.GOOS, e.g. linux or darwin)", tt.os, err, tt.want)
		}
	}
}

func TestHostFactsJSON(t *testing.T) {
	// The example of DESIGN.md, the format of `skillgate eval --hosts`.
	in := `{"id": "mac-1", "os": "darwin", "roles": ["execution"],
 "capabilities": ["filesystem.list","filesystem.read","filesystem.write","shell.exec"],
 "env": ["GITHUB_TOKEN"], "hostBinStatus": {"gh": true, "tmux": false}}`
	var h HostFacts
	if err := json.Unmarshal([]byte(in), &h); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	if !h.HostBinStatus["gh"] || h.HostBinStatus["tmux"] || len(h.Env) != 1 {
		t.Fatalf("got %+v", h)
	}
}
