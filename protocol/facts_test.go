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
		{"no os", func(h *HostFacts) { h.OS = " " }, "os: is empty"},
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
