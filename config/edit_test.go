package config

import (
	"errors"
	"testing"
)

func TestEdit(t *testing.T) {
	const digest = "sha256:aaaa"
	tests := []struct {
		name, src string
		edit      func(e *Edit) error
		want      string
	}{
		{
			name: "an empty file: objects made on the way",
			src:  "{}\n",
			edit: func(e *Edit) error { return e.Set(digest, "skills", "entries", "gh", "approve") },
			want: "{\"skills\": {\"entries\": {\"gh\": {\"approve\": \"sha256:aaaa\"}}}}\n",
		},
		{
			name: "comments stay, new members are indented like their siblings",
			src:  "// top\n{\n  // the operator's\n  \"gateway\": {\"governance\": {\"review\": \"required\"}}, // review\n  \"skills\": {\n    \"entries\": {\n      \"gh\": {\"enabled\": true}, // kept\n      // \"x\": {}\n    },\n  },\n}\n",
			edit: func(e *Edit) error {
				return errors.Join(e.Append(map[string]any{"rule": "r", "reason": "why"}, "skills", "entries", "gh", "suppress"),
					e.Set("quarantine", "skills", "entries", "tmux", "mode"), e.Set("t", "skills", "entries", "tmux", "reason"))
			},
			want: "// top\n{\n  // the operator's\n  \"gateway\": {\"governance\": {\"review\": \"required\"}}, // review\n  \"skills\": {\n    \"entries\": {\n      \"gh\": {\"enabled\": true, \"suppress\": [{\"reason\": \"why\", \"rule\": \"r\"}]}, // kept\n      // \"x\": {}\n      \"tmux\": {\"mode\": \"quarantine\", \"reason\": \"t\"},\n    },\n  },\n}\n",
		},
		{
			name: "a new top-level object after a comment on the last member",
			src:  "{\n\t\"gateway\": {\"listen\": \"127.0.0.1:1\"} // ours\n}\n",
			edit: func(e *Edit) error { return e.Set(digest, "skills", "entries", "gh", "approve") },
			want: "{\n\t\"gateway\": {\"listen\": \"127.0.0.1:1\"}, // ours\n\t\"skills\": {\"entries\": {\"gh\": {\"approve\": \"sha256:aaaa\"}}}\n}\n",
		},
		{
			name: "append to a list on separate lines",
			src:  "{\"skills\": {\"entries\": {\"gh\": {\"approve\": [\n  \"x\", // first\n]}}}}",
			edit: func(e *Edit) error { return e.Append(digest, "skills", "entries", "gh", "approve") },
			want: "{\"skills\": {\"entries\": {\"gh\": {\"approve\": [\n  \"x\", // first\n  \"sha256:aaaa\",\n]}}}}",
		},
		{
			name: "append to a list on one line",
			src:  "{\"skills\": {\"entries\": {\"gh\": {\"approve\": [\"x\"]}}}}",
			edit: func(e *Edit) error { return e.Append(digest, "skills", "entries", "gh", "approve") },
			want: "{\"skills\": {\"entries\": {\"gh\": {\"approve\": [\"x\", \"sha256:aaaa\"]}}}}",
		},
		{
			name: "keys with / and ~",
			src:  "{}",
			edit: func(e *Edit) error { return e.Set("quarantine", "skills", "entries", "skills/a~b/SKILL.md", "mode") },
			want: "{\"skills\": {\"entries\": {\"skills/a~b/SKILL.md\": {\"mode\": \"quarantine\"}}}}",
		},
		{
			name: "replace a value, keeping its comment",
			src:  "{\"skills\": {\"entries\": {\"gh\": {\"mode\": /* why */ \"block\"}}}}",
			edit: func(e *Edit) error { return e.Set("quarantine", "skills", "entries", "gh", "mode") },
			want: "{\"skills\": {\"entries\": {\"gh\": {\"mode\": /* why */ \"quarantine\"}}}}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEdit([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.edit(e); err != nil {
				t.Fatal(err)
			}
			if got := string(e.Bytes()); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestEditRefuses(t *testing.T) {
	e, err := NewEdit([]byte(`{"skills": {"entries": {"gh": "off"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Set("x", "skills", "entries", "gh", "mode"); err == nil || err.Error() != `skills.entries.gh is the string "off", not an object` {
		t.Errorf("err = %v", err)
	}
	if err := e.Append("x", "skills", "entries"); err == nil || err.Error() != "skills.entries is not a list" {
		t.Errorf("err = %v", err)
	}
	if _, err := NewEdit([]byte(`[1]`)); err == nil {
		t.Error("a list is not a config")
	}
}

// TestParseKeepsData: Parse must not change the bytes it is given (hujson
// blanks comments in place when it standardizes), since the commands that
// edit the file parse it first.
func TestParseKeepsData(t *testing.T) {
	src := "{\n  // a comment\n  \"gateway\": {\"poll\": \"2s\"}, /* another */\n}\n"
	data := []byte(src)
	if _, err := Parse("gw.hujson", data); err != nil {
		t.Fatal(err)
	}
	if string(data) != src {
		t.Errorf("Parse changed its input to %q", data)
	}
}
