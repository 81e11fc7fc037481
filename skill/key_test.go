package skill

import (
	"reflect"
	"strings"
	"testing"
)

func TestValidateID(t *testing.T) {
	cases := []struct {
		id      string
		wantErr string // "" = valid
	}{
		{"github", ""},
		{"main", ""},
		{"a.b", ""},
		{".hidden", ""},
		{"café-☕", ""},
		{"with space", ""},
		{strings.Repeat("a", MaxIDLen), ""},
		{strings.Repeat("é", MaxIDLen/2), ""}, // 128 bytes
		{"", "is empty"},
		{strings.Repeat("a", MaxIDLen+1), "is 129 bytes, more than 128"},
		{strings.Repeat("é", MaxIDLen/2) + "a", "is 129 bytes, more than 128"},
		{"a/b", `"a/b" contains a slash or backslash`},
		{`a\b`, `"a\\b" contains a slash or backslash`},
		{"..", `".." contains ".."`},
		{"a..b", `"a..b" contains ".."`},
		{"...", `"..." contains ".."`},
		{"a\x00b", `"a\x00b" contains a control character`},
		{"\t", `"\t" contains a control character`},
		{"a\nb", `"a\nb" contains a control character`},
		{"\x1f", `"\x1f" contains a control character`},
		{"del\x7f", `"del\x7f" contains a control character`},
		{"c1\u0085", `"c1\u0085" contains a control character`},
		{"bad\xffutf8", `"bad\xffutf8" is not valid UTF-8`},
	}
	for _, tc := range cases {
		err := ValidateID(tc.id)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ValidateID(%q) = %v, want nil", tc.id, err)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("ValidateID(%q) = %v, want %q", tc.id, err, tc.wantErr)
		}
	}
}

func TestParseKey(t *testing.T) {
	const notSkill = "not a skill: only skills/{dir}/SKILL.md and agents/{agentId}/skills/{dir}/SKILL.md are loaded"
	long := strings.Repeat("d", MaxIDLen+1)
	cases := []struct {
		key     string
		want    Ref
		ok      bool
		wantErr string
	}{
		{key: "skills/github/SKILL.md", want: Ref{Key: "skills/github/SKILL.md", Dir: "github", Scope: ScopeGlobal}, ok: true},
		{key: "agents/main/skills/github/SKILL.md", want: Ref{Key: "agents/main/skills/github/SKILL.md", Dir: "github", Scope: ScopeAgent, Agent: "main"}, ok: true},
		{key: "skills/" + strings.Repeat("d", MaxIDLen) + "/SKILL.md", want: Ref{Key: "skills/" + strings.Repeat("d", MaxIDLen) + "/SKILL.md", Dir: strings.Repeat("d", MaxIDLen), Scope: ScopeGlobal}, ok: true},
		{key: "skills/café/SKILL.md", want: Ref{Key: "skills/café/SKILL.md", Dir: "café", Scope: ScopeGlobal}, ok: true},

		// Not about skills at all: ignored without an error.
		{key: ""},
		{key: "SKILL.md"},
		{key: "README.md"},
		{key: "skills/github/README.md"},
		{key: "skills/github/references/api.md"},
		{key: "skills/github/"},
		{key: "skills/github/SKILL.md.bak"},
		{key: "other/github/SKILL.md"},
		{key: "backup/skills/github/SKILL.md"},

		// Named like a skill file but not loaded: reported.
		{key: "skills/github/skill.md", wantErr: `file is named "skill.md", not SKILL.md: it is not loaded as a skill`},
		{key: "skills/github/SKILL.MD", wantErr: `file is named "SKILL.MD", not SKILL.md: it is not loaded as a skill`},
		{key: "agents/main/skills/github/Skill.md", wantErr: `file is named "Skill.md", not SKILL.md: it is not loaded as a skill`},
		{key: "skills/SKILL.md", wantErr: notSkill},
		{key: "skills/a/examples/b/SKILL.md", wantErr: notSkill},
		{key: "skills/a/b/SKILL.md", wantErr: notSkill},
		{key: "agents/main/SKILL.md", wantErr: notSkill},
		{key: "agents/main/skills/SKILL.md", wantErr: notSkill},
		{key: "agents/main/tools/github/SKILL.md", wantErr: notSkill},
		{key: "agents/main/skills/a/examples/SKILL.md", wantErr: notSkill},
		{key: "agents/main/skills/a/examples/b/SKILL.md", wantErr: notSkill},

		// Invalid names.
		{key: "skills//SKILL.md", wantErr: "skill directory name is empty"},
		{key: "skills/../SKILL.md", wantErr: `skill directory name ".." contains ".."`},
		{key: "skills/a..b/SKILL.md", wantErr: `skill directory name "a..b" contains ".."`},
		{key: `skills/a\b/SKILL.md`, wantErr: `skill directory name "a\\b" contains a slash or backslash`},
		{key: "skills/a\x01b/SKILL.md", wantErr: `skill directory name "a\x01b" contains a control character`},
		{key: "skills/a\x7fb/SKILL.md", wantErr: `skill directory name "a\x7fb" contains a control character`},
		{key: "skills/" + long + "/SKILL.md", wantErr: "skill directory name is 129 bytes, more than 128"},
		{key: "agents//skills/x/SKILL.md", wantErr: "agent id is empty"},
		{key: "agents/../skills/x/SKILL.md", wantErr: `agent id ".." contains ".."`},
		{key: "agents/a\tb/skills/x/SKILL.md", wantErr: `agent id "a\tb" contains a control character`},
		{key: `agents/a\b/skills/x/SKILL.md`, wantErr: `agent id "a\\b" contains a slash or backslash`},
		{key: "agents/" + long + "/skills/x/SKILL.md", wantErr: "agent id is 129 bytes, more than 128"},
		{key: "agents/main/skills/../SKILL.md", wantErr: `skill directory name ".." contains ".."`},
		{key: "agents/main/skills/x\x7f/SKILL.md", wantErr: `skill directory name "x\x7f" contains a control character`},
	}
	for _, tc := range cases {
		ref, ok, err := ParseKey(tc.key)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if ref != tc.want || ok != tc.ok || gotErr != tc.wantErr {
			t.Errorf("ParseKey(%q) = %+v, %v, %q; want %+v, %v, %q", tc.key, ref, ok, gotErr, tc.want, tc.ok, tc.wantErr)
		}
	}
}

// TestKeyBuildersRoundTrip checks that the keys GlobalKey and AgentKey build
// parse back to the same names.
func TestKeyBuildersRoundTrip(t *testing.T) {
	if got := AgentPrefix("main"); got != "agents/main/skills/" {
		t.Errorf("AgentPrefix = %q", got)
	}
	for _, tc := range []struct {
		key  string
		want Ref
	}{
		{GlobalKey("github"), Ref{Key: "skills/github/SKILL.md", Dir: "github", Scope: ScopeGlobal}},
		{AgentKey("main", "github"), Ref{Key: "agents/main/skills/github/SKILL.md", Dir: "github", Scope: ScopeAgent, Agent: "main"}},
	} {
		ref, ok, err := ParseKey(tc.key)
		if !ok || err != nil || !reflect.DeepEqual(ref, tc.want) {
			t.Errorf("ParseKey(%q) = %+v, %v, %v; want %+v", tc.key, ref, ok, err, tc.want)
		}
	}
}

func TestReadPath(t *testing.T) {
	cases := []struct{ key, want string }{
		{"agents/main/skills/github/SKILL.md", "skills/github/SKILL.md"},
		{"agents/main/skills/github/references/api.md", "skills/github/references/api.md"},
		{"agents/skills/skills/x/SKILL.md", "skills/x/SKILL.md"},
		{"skills/github/SKILL.md", "skills/github/SKILL.md"},
		{"skills/github/references/api.md", "skills/github/references/api.md"},
		{"agents/main/tools/x", "agents/main/tools/x"},
		{"agents/", "agents/"},
		{"other/agents/main/skills/x", "other/agents/main/skills/x"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := ReadPath(tc.key); got != tc.want {
			t.Errorf("ReadPath(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}
