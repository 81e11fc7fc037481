package gateway_test

import (
	"testing"
)

// TestInvisibleNotInPrompt: a description that hides text in tag
// characters and reorders it with a bidi override reaches no prompt with
// them, whatever gateway.governance.mode: under off (no scan) and observe
// (scanned, reported only) the skill is offered with the visible text
// alone; under enforce governance holds it.
func TestInvisibleNotInPrompt(t *testing.T) {
	hidden := "Formats reports.\U000e0001\U000e0049\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065\U000e007f \u202eevil\u202c"
	files := map[string]string{
		"skills/hidden/SKILL.md": skillMD("hidden", hidden, ""),
		"skills/plain/SKILL.md":  skillMD("plain", "Plain skill.", ""),
	}
	plain := global("plain", "Plain skill.")
	for _, c := range []struct {
		mode string
		want string
	}{
		{"off", block(global("hidden", "Formats reports. evil"), plain)},
		{"observe", block(global("hidden", "Formats reports. evil"), plain)},
		{"enforce", block(plain)},
	} {
		t.Run(c.mode, func(t *testing.T) {
			g := startGateway(t, gwOptions{files: files, config: `{"gateway": {"governance": {"mode": "` + c.mode + `"}}}`})
			g.waitPrompt(t, "main", c.want)
		})
	}
}
