package skill
import ("testing";"strings";"time")
func TestZZPerf(t *testing.T){
 const N = 256<<10
 fill := func(unit string) string { return strings.Repeat(unit, N/len(unit)) }
 cases := map[string]string{
  "dup flow metadata": "---\n" + fill("metadata: {}\n") + "---\n",
  "dup flat metadata": "---\nx: a: b\n" + fill("metadata: {}\n") + "---\n",
  "dup flat name": "---\nx: a: b\n" + fill("name: x\n") + "---\n",
  "nested flow": "---\nmetadata: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n---\n",
  "nested flow map": "---\nmetadata: " + strings.Repeat("{a: ", 9000) + strings.Repeat("}", 9000) + "\n---\n",
  "nested hujson": "---\nmetadata: '" + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "'\n---\n",
  "flat nested hujson": "---\nx: a: b\nmetadata: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n---\n",
  "body no blank": fill("word word word\n"),
  "body blank": fill("#\n\n"),
  "long line": "---\ndescription: " + fill("a") + "\n---\n",
  "many keys": "---\n" + fill("k: v\n") + "---\n",
  "many metadata keys": "---\nmetadata:\n" + fill("  k: v\n") + "---\n",
  "block lines": "---\nx: a: b\nmetadata:\n" + fill("  \n") + "---\n",
  "unclosed": "---\n" + fill("a: b\n"),
  "aliases": "---\na: &a [x]\nmetadata:\n" + fill("  - *a\n") + "---\n",
  "anchors": "---\nmetadata:\n" + fill("  - &a x\n") + "---\n",
  "merge": "---\nb: &b {x: 1}\nmetadata:\n  <<: [" + strings.Repeat("*b,", 80000) + "*b]\n---\n",
 }
 for name, in := range cases {
  st := time.Now(); s := Parse(testRef, []byte(in)); d := time.Since(st)
  msg := ""; if len(s.Diagnostics) > 0 { msg = s.Diagnostics[0].Message; if len(msg) > 100 { msg = msg[:100] } }
  t.Logf("%-22s %8v len=%d diags=%d %s", name, d.Round(time.Millisecond), len(in), len(s.Diagnostics), msg)
 }
}
