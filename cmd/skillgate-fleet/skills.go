package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/internal/cli"
)

// maxSkills bounds `skills -n`.
const maxSkills = 100_000

// synthSkill is one generated skill and the requirements written into it.
type synthSkill struct {
	Dir         string
	Name        string
	Description string
	Homepage    string
	Always      bool
	OS          []string
	NamespaceOS bool // os written at the openclaw namespace level (the compatibility form)
	HostRoles   []string
	Caps        []string
	Env         []string
	Bins        []string
	AnyBins     []string
	Install     bool // an install entry in the metadata, as real skills have
	Multiline   bool // metadata as a multi-line flow mapping
}

func cmdSkills(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet skills", stderr)
	out := fs.String("out", "", "directory store to write (DIR/skills/s0000/SKILL.md …)")
	n := fs.Int("n", 1000, "number of synthetic skills")
	probe := fs.Bool("probe", false, "also write the probe skill "+probeSkill+" (requires bin "+probeBin+") for `nodes --probe-agent`")
	seed := fs.Uint64("seed", 1, "random seed; the same seed writes the same files")
	force := fs.Bool("force", false, "replace DIR/skills if it already holds files")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return cli.Usagef("--out is required: the directory to write the store into")
	}
	if *n < 0 || *n > maxSkills {
		return cli.Usagef("-n: %d is out of range (0…%d)", *n, maxSkills)
	}
	skills := genSkills(*n, *seed, *probe)
	if err := writeStore(*out, skills, *force); err != nil {
		return err
	}
	extra := ""
	if *probe {
		extra = ", with probe skill " + probeSkill
	}
	fmt.Fprintf(stdout, "wrote %d skills to %s (seed %d%s); serve them with: skillgate serve --store %s\n",
		len(skills), filepath.Join(*out, "skills"), *seed, extra, *out)
	return nil
}

// Words of the synthetic descriptions.
var (
	descVerbs   = []string{"Manage", "Inspect", "Summarize", "Deploy", "Query", "Monitor", "Convert", "Search", "Sync", "Audit", "Render", "Archive"}
	descObjects = []string{"build artifacts", "calendar events", "container images", "database migrations", "log streams",
		"release notes", "support tickets", "infrastructure plans", "video files", "weather alerts", "pull requests", "notebooks"}
	descFiller = []string{"quickly", "safely", "from the terminal", "with sensible defaults", "in batches", "across projects"}
)

// genSkills returns n synthetic skills (and the probe skill first when
// probe is set), deterministic for a seed. Their requirements draw on the
// vocabulary of the simulated nodes, in a spread that resembles a real
// bucket: most skills need one or two binaries, some an env name, an OS or
// any of a few binaries; a few are always on, a few need nothing, and a
// few need a binary no simulated node has.
func genSkills(n int, seed uint64, probe bool) []synthSkill {
	r := rand.New(rand.NewPCG(seed, 0x5c111))
	digits := max(4, len(strconv.Itoa(n-1)))
	var out []synthSkill
	if probe {
		out = append(out, synthSkill{
			Dir: probeSkill, Name: probeSkill, Bins: []string{probeBin},
			Description: "Probe skill of skillgate-fleet: eligible only while the probe node (with " + probeBin + ") is connected.",
		})
	}
	bin := func() string { return binName(r.IntN(binPool)) }
	bins := func(k int) []string {
		var set [(binPool + 63) / 64]uint64
		sample(r, binPool, k, set[:])
		var l []string
		for i := range binPool {
			if set[i/64]>>(i%64)&1 == 1 {
				l = append(l, binName(i))
			}
		}
		r.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		return l
	}
	for i := range n {
		s := synthSkill{Dir: fmt.Sprintf("s%0*d", digits, i)}
		s.Name = s.Dir
		switch x := r.Float64(); {
		case x < 0.05: // always on, requirements ignored
			s.Always = true
			s.Bins = []string{bin()}
		case x < 0.15: // no requirements
		case x < 0.50:
			s.Bins = []string{bin()}
		case x < 0.65:
			s.Bins = bins(2)
		case x < 0.75:
			s.AnyBins = bins(3)
		case x < 0.85:
			s.Env = []string{envName(r.IntN(envPool))}
			s.Bins = []string{bin()}
		case x < 0.92:
			s.OS = []string{[]string{"darwin", "linux"}[r.IntN(2)]}
			s.NamespaceOS = true
			s.Bins = []string{bin()}
		case x < 0.95:
			s.OS = []string{"windows"}
			s.HostRoles = []string{"specialized"}
		case x < 0.97:
			s.HostRoles = []string{"execution"}
			s.Caps = []string{"filesystem.edit", "text.search"}
		default: // a binary no simulated node has
			s.Bins = []string{fmt.Sprintf("absent%03d", r.IntN(1000))}
		}
		s.Install = len(s.Bins) > 0 && r.IntN(4) == 0
		s.Multiline = r.IntN(3) == 0
		if r.IntN(5) == 0 {
			s.Homepage = "https://example.invalid/skills/" + s.Dir
		}
		s.Description = describe(r, i, seed, s)
		out = append(out, s)
	}
	return out
}

// describe writes a description of about 100 characters. It contains an
// ampersand, so that prompt builds exercise XML escaping.
func describe(r *rand.Rand, i int, seed uint64, s synthSkill) string {
	var b strings.Builder
	b.WriteString(descVerbs[r.IntN(len(descVerbs))] + " " + descObjects[r.IntN(len(descObjects))])
	switch {
	case len(s.Bins) > 0:
		b.WriteString(" with " + strings.Join(s.Bins, " & "))
	case len(s.AnyBins) > 0:
		b.WriteString(" with any of " + strings.Join(s.AnyBins, ", "))
	case len(s.OS) > 0:
		b.WriteString(" on " + s.OS[0] + " hosts")
	}
	b.WriteString(fmt.Sprintf("; synthetic skill %d (seed %d) for load & sizing tests", i, seed))
	for b.Len() < 95 {
		b.WriteString(", " + descFiller[r.IntN(len(descFiller))])
	}
	d := b.String()
	if len(d) > 110 {
		d = d[:110]
		if k := strings.LastIndexByte(d, ' '); k > 80 {
			d = d[:k]
		}
		d = strings.TrimRight(d, ",; &")
	}
	return d + "."
}

// render returns the SKILL.md of a synthetic skill: YAML frontmatter with
// the openclaw metadata in flow-mapping style, as real skills write it.
func (s synthSkill) render() string {
	q := func(v any) string { // JSON is valid YAML; keep & < > readable
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		return strings.TrimSuffix(b.String(), "\n")
	}
	var req []string
	add := func(key string, l []string) {
		if len(l) > 0 {
			req = append(req, fmt.Sprintf("%q: %s", key, strings.ReplaceAll(q(l), `","`, `", "`)))
		}
	}
	if !s.NamespaceOS {
		add("os", s.OS)
	}
	add("hostRoles", s.HostRoles)
	add("capabilities", s.Caps)
	add("env", s.Env)
	add("bins", s.Bins)
	add("anyBins", s.AnyBins)

	ns := []string{`"emoji": "🧪"`}
	if s.NamespaceOS {
		ns = append(ns, `"os": `+strings.ReplaceAll(q(s.OS), `","`, `", "`))
	}
	if len(req) > 0 {
		ns = append(ns, `"requires": { `+strings.Join(req, ", ")+` }`)
	}
	if s.Install {
		ns = append(ns, fmt.Sprintf(`"install": [{ "id": "brew", "kind": "brew", "formula": %s, "bins": [%s], "label": %s }]`,
			q(s.Bins[0]), q(s.Bins[0]), q("Install "+s.Bins[0]+" (brew)")))
	}

	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString("name: " + s.Name + "\n")
	b.WriteString("description: " + q(s.Description) + "\n")
	if s.Homepage != "" {
		b.WriteString("homepage: " + s.Homepage + "\n")
	}
	if s.Always {
		b.WriteString("always: true\n")
	}
	b.WriteString("metadata:\n")
	if s.Multiline {
		b.WriteString("  {\n    \"openclaw\":\n      {\n")
		for i, f := range ns {
			b.WriteString("        " + f)
			if i < len(ns)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("      },\n  }\n")
	} else {
		b.WriteString(`  { "openclaw": { ` + strings.Join(ns, ", ") + " } }\n")
	}
	b.WriteString("---\n\n")
	b.WriteString("# " + s.Name + "\n\n" + s.Description + "\n\n## Usage\n\n")
	switch {
	case len(s.Bins) > 0:
		b.WriteString("Run `" + s.Bins[0] + " --help` to list the sub-commands, then call the one the task needs.\n")
	case len(s.AnyBins) > 0:
		b.WriteString("Use whichever of " + strings.Join(s.AnyBins, ", ") + " is installed.\n")
	default:
		b.WriteString("Follow the steps below; no binary is needed.\n")
	}
	b.WriteString("\n1. Read the request.\n2. Do the work.\n3. Report what changed.\n")
	return b.String()
}

// writeStore writes skills under root/skills. An existing root/skills
// that holds anything is replaced only with force, so a typo in --out
// cannot mix two generations (or delete someone's bucket copy).
func writeStore(root string, skills []synthSkill, force bool) error {
	dir := filepath.Join(root, "skills")
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cli.Usagef("--out: %v", err)
	case len(entries) > 0 && !force:
		return cli.Usagef("--out: %s already holds %d entries; choose an empty directory or pass --force to replace %s", dir, len(entries), dir)
	case len(entries) > 0:
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("--force: removing %s: %w", dir, err)
		}
	}
	for _, s := range skills {
		d := filepath.Join(dir, s.Dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("writing the store: %w", err)
		}
		if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(s.render()), 0o644); err != nil {
			return fmt.Errorf("writing the store: %w", err)
		}
	}
	return nil
}
