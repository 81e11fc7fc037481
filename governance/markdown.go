package governance

import (
	"bytes"
	"sort"
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The markdown structure of a file comes from goldmark (CommonMark with
// GFM tables). The parser decides only what each line is — a line of a
// fenced or indented code block, of an HTML <pre> block, a table row, a
// line with a blockquote marker, the first line of a list item, a
// heading — and where inline code spans and link titles are; the rules
// still read every line of the file, whatever it is (scanMarkdown).

// mdKind is what kind of line goldmark says a line is.
type mdKind uint8

const (
	mdText      mdKind = iota // paragraph, heading, HTML block, thematic break, blank: a markdown line
	mdFenceOpen               // the opening line of a fenced code block
	mdFenceBody               // a line inside a fenced code block
	mdFenceEnd                // the closing line of a fenced code block
	mdIndented                // a line of an indented code block
	mdPre                     // a line of an HTML <pre> block
)

// mdItem says a line opens a list item, and of which kind of list.
type mdItem uint8

const (
	mdNoItem mdItem = iota
	mdBullet
	mdOrdered
)

// mdLine is what the parser says of one line.
type mdLine struct {
	kind  mdKind
	item  mdItem // the line opens a list item
	quote bool   // the line is in a blockquote and starts with its marker (a lazy continuation line does not)
	table bool   // a row (or the delimiter row) of a table
	// heading is 1 + the index in mdDoc.headings of the heading that
	// starts on this line (0: none). Only headings of the document, not
	// those in a blockquote or a list item, open a section.
	heading int32
	block   int32 // for code lines: the index of the block in mdDoc.blocks
	col     int32 // for code lines: where the code starts (after blockquote markers and list indentation)
	// ext is 1 + the index in mdDoc.ext of the line's code spans and link
	// titles (0: none, as on most lines): the lines of a file are one
	// array without pointers, which the garbage collector need not read.
	ext int32
}

// mdExt is what few lines have: inline code spans, link titles.
type mdExt struct {
	spans  []span
	titles []int // offsets of the quotation marks that open link titles
}

// mdBlock is a code block: fenced, indented or an HTML <pre> block.
type mdBlock struct {
	info        string // a fence's info string
	first, last int    // its first and last lines (0-based, in the file), opening and closing lines included
	col         int    // a fence's: where its opening fence starts on the first line
}

// mdDoc is the structure of lines[from:] of a file, by file line.
type mdDoc struct {
	from     int
	lines    []mdLine
	blocks   []mdBlock
	headings []string // each heading's text as written (an ATX heading's line, a setext heading's lines)
	ext      []mdExt
}

// spans returns the inline code spans of a line of d.
func (d *mdDoc) spans(l *mdLine) []span {
	if l.ext == 0 {
		return nil
	}
	return d.ext[l.ext-1].spans
}

// titles returns where the link titles of a line of d open.
func (d *mdDoc) titles(l *mdLine) []int {
	if l.ext == 0 {
		return nil
	}
	return d.ext[l.ext-1].titles
}

// extOf returns the spans and titles of a line of d, made on first use.
func (d *mdDoc) extOf(l *mdLine) *mdExt {
	if l.ext == 0 {
		d.ext = append(d.ext, mdExt{})
		l.ext = int32(len(d.ext))
	}
	return &d.ext[l.ext-1]
}

// line returns what the parser says of file line i (0-based).
func (d *mdDoc) line(i int) *mdLine { return &d.lines[i-d.from] }

// maxHTMLDepth bounds how deep the lines of an HTML block are parsed again
// as markdown (see mdBuilder.html).
const maxHTMLDepth = 3

// mdParser is goldmark's parser with what the scanner reads: the default
// CommonMark blocks, GFM tables, and of the inlines only code spans, links,
// autolinks and raw HTML (emphasis decides nothing here).
var mdParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(
		util.Prioritized(parser.NewCodeSpanParser(), 100),
		util.Prioritized(parser.NewLinkParser(), 200),
		util.Prioritized(parser.NewAutoLinkParser(), 300),
		util.Prioritized(parser.NewRawHTMLParser(), 400),
	),
	parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	parser.WithParagraphTransformers(util.Prioritized(extension.NewTableParagraphTransformer(), 200)),
)

// parseMarkdown parses lines[from:] (one file's normalized lines).
func parseMarkdown(lines []string, from int) *mdDoc {
	d := &mdDoc{from: from, lines: make([]mdLine, len(lines)-from)}
	if from >= len(lines) {
		return d
	}
	size := 0
	for _, l := range lines[from:] {
		size += len(l) + 1
	}
	n := len(lines) - from
	// The source and the line tables are scratch: nothing the parse
	// leaves (d) points into them.
	sc := mdScratchPool.Get().(*mdScratch)
	defer mdScratchPool.Put(sc)
	src := sc.src[:0]
	if cap(src) < size {
		src = make([]byte, 0, size)
	}
	idx := sc.idx
	if cap(idx) < 3*n {
		idx = make([]int, 3*n) // one allocation for the three
	}
	starts, cols, fileLine := idx[:0:n], idx[n:n:2*n], idx[2*n:2*n:3*n]
	for i := from; i < len(lines); i++ {
		starts = append(starts, len(src))
		cols = append(cols, 0)
		fileLine = append(fileLine, i)
		src = append(src, lines[i]...)
		src = append(src, '\n')
	}
	sc.src, sc.idx = src, idx
	b := &mdBuilder{d: d, lines: lines}
	b.parse(src, starts, cols, fileLine, 0)
	return d
}

// mdScratch is parseMarkdown's scratch, kept for the next parse (a file
// of 256 KiB: 450 KB that were allocated and cleared at every scan).
type mdScratch struct {
	src []byte
	idx []int
}

var mdScratchPool = sync.Pool{New: func() any { return new(mdScratch) }}

// mdBuilder fills an mdDoc from one parse, and from the parses of the
// lines of its HTML blocks again.
type mdBuilder struct {
	d     *mdDoc
	lines []string
}

// parse parses src, whose line k starts at starts[k] and is file line
// fileLine[k] from its byte cols[k] on (a nested parse reads the content
// of an HTML block's lines, after their container markers).
func (b *mdBuilder) parse(src []byte, starts, cols, fileLine []int, depth int) {
	root := mdParser.Parse(text.NewReader(src))
	// lineOf maps an offset of src to its index in starts. The walk asks
	// in the order of the text, mostly: the line asked last, or the next,
	// is tried before a search.
	hint := 0
	lineOf := func(off int) int {
		k := hint
		switch {
		case k < len(starts) && starts[k] <= off && (k+1 == len(starts) || starts[k+1] > off):
		case k+1 < len(starts) && starts[k+1] <= off && (k+2 == len(starts) || starts[k+2] > off):
			k++
		default:
			k = sort.SearchInts(starts, off+1) - 1
		}
		if k >= 0 {
			hint = k
		}
		return k
	}
	at := func(off int) (*mdLine, int, int) {
		k := lineOf(off)
		return b.d.line(fileLine[k]), fileLine[k], cols[k] + off - starts[k]
	}
	var fenceEnds []int // lines that may close a fence, checked once all openings are known
	opens := map[int]bool{}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			if n.Pos() < 0 {
				return ast.WalkSkipChildren, nil
			}
			l, first, col := at(n.Pos())
			info := ""
			if n.Info != nil {
				info = string(n.Info.Segment.Value(src))
			}
			blk := mdBlock{info: info, first: first, last: first, col: col}
			bi := int32(len(b.d.blocks))
			l.kind, l.block, l.col = mdFenceOpen, bi, int32(col)
			opens[first] = true
			last := lineOf(n.Pos())
			segs := n.Lines()
			for k := 0; k < segs.Len(); k++ {
				seg := segs.At(k)
				bl, fl, c := at(seg.Start)
				bl.kind, bl.block, bl.col = mdFenceBody, bi, int32(c)
				blk.last, last = fl, lineOf(seg.Start)
			}
			b.d.blocks = append(b.d.blocks, blk)
			if last+1 < len(starts) {
				fenceEnds = append(fenceEnds, int(bi), last+1)
			}
			b.mark(n, at, src)
			return ast.WalkSkipChildren, nil
		case *ast.CodeBlock:
			b.codeLines(n, at, mdIndented)
			b.mark(n, at, src)
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			b.htmlBlock(n, src, starts, cols, fileLine, at, depth)
			b.mark(n, at, src)
			return ast.WalkSkipChildren, nil
		case *ast.ListItem:
			if n.Pos() >= 0 {
				l, _, _ := at(n.Pos())
				l.item = mdBullet
				if list, ok := n.Parent().(*ast.List); ok && list.IsOrdered() {
					l.item = mdOrdered
				}
			}
		case *ast.Heading:
			if _, top := n.Parent().(*ast.Document); top && n.Pos() >= 0 {
				b.heading(n, at, src)
			}
			b.mark(n, at, src)
		case *extast.TableHeader, *extast.TableRow:
			if n.Pos() >= 0 {
				l, fl, _ := at(n.Pos())
				l.table = true
				b.mark(n, at, src)
				if _, hdr := n.(*extast.TableHeader); hdr && fl+1 < len(b.lines) {
					b.d.line(fl + 1).table = true // the delimiter row
				}
			}
		case *ast.Paragraph, *ast.TextBlock:
			b.mark(n, at, src)
		case *ast.CodeSpan:
			b.codeSpan(n, at, src)
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			b.linkTitle(n.Title, n.Pos(), at, src)
		case *ast.Image:
			b.linkTitle(n.Title, n.Pos(), at, src)
		}
		return ast.WalkContinue, nil
	})
	// A fence's closing line: the line after its content, when that line
	// does not open another fence (a fence left open ends where its
	// blockquote or list item does, and the next line may open one).
	for k := 0; k+1 < len(fenceEnds); k += 2 {
		bi, next := fenceEnds[k], fenceEnds[k+1]
		fl := fileLine[next]
		l := b.d.line(fl)
		if opens[fl] || l.kind != mdText || !fenceCloser(b.lines[fl], b.lines[b.d.blocks[bi].first][b.d.blocks[bi].col:]) {
			continue
		}
		l.kind, l.block = mdFenceEnd, int32(bi)
		l.quote = b.d.line(b.d.blocks[bi].first).quote && strings.HasPrefix(strings.TrimLeft(b.lines[fl], " \t"), ">")
		b.d.blocks[bi].last = fl
	}
}

// fenceCloser reports a line that closes the fence open (the opening
// line from its fence on): the same character, at least as many, nothing
// after them.
func fenceCloser(line, open string) bool {
	t := strings.TrimLeft(line, " \t>")
	o := open
	if t == "" || o == "" || (t[0] != '`' && t[0] != '~') || t[0] != o[0] {
		return false
	}
	n, m := 0, 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	for m < len(o) && o[m] == o[0] {
		m++
	}
	return n >= m && strings.TrimSpace(t[n:]) == ""
}

// mark records, for each line of a block, that a blockquote holds it (when
// the line carries the marker).
func (b *mdBuilder) mark(n ast.Node, at func(int) (*mdLine, int, int), src []byte) {
	quoted := false
	for p := n.Parent(); p != nil; p = p.Parent() {
		if _, ok := p.(*ast.Blockquote); ok {
			quoted = true
			break
		}
	}
	if !quoted {
		return
	}
	segs := n.Lines()
	for k := 0; k < segs.Len(); k++ {
		_, fl, _ := at(segs.At(k).Start)
		if strings.HasPrefix(strings.TrimLeft(b.lines[fl], " \t"), ">") {
			b.d.line(fl).quote = true
		}
	}
	if n.Pos() >= 0 {
		_, fl, _ := at(n.Pos())
		if strings.HasPrefix(strings.TrimLeft(b.lines[fl], " \t"), ">") {
			b.d.line(fl).quote = true
		}
	}
}

// codeLines marks the lines of an indented code block.
func (b *mdBuilder) codeLines(n ast.Node, at func(int) (*mdLine, int, int), kind mdKind) {
	segs := n.Lines()
	if segs.Len() == 0 {
		return
	}
	bi := int32(len(b.d.blocks))
	blk := mdBlock{first: -1}
	for k := 0; k < segs.Len(); k++ {
		l, fl, c := at(segs.At(k).Start)
		l.kind, l.block, l.col = kind, bi, int32(c)
		if blk.first < 0 {
			blk.first = fl
		}
		blk.last = fl
	}
	b.d.blocks = append(b.d.blocks, blk)
}

// htmlBlock marks an HTML block's lines: a <pre> block's as code; the
// lines after the first line of any other block of markup (types 6 and
// 7: <div>, <details>, a tag alone on its line) are parsed again as
// markdown, since an agent reads the source, where a fence under
// <details> is a fence; the others (comments, <script>, <style>) stay
// markdown lines.
func (b *mdBuilder) htmlBlock(n *ast.HTMLBlock, src []byte, starts, cols, fileLine []int, at func(int) (*mdLine, int, int), depth int) {
	segs := n.Lines()
	if segs.Len() == 0 {
		return
	}
	first := segs.At(0)
	head := bytes.TrimLeft(first.Value(src), " \t")
	switch {
	case n.HTMLBlockType == ast.HTMLBlockType1 && len(head) >= 4 && bytes.EqualFold(head[:4], []byte("<pre")):
		bi := int32(len(b.d.blocks))
		blk := mdBlock{first: -1}
		mark := func(seg text.Segment) {
			l, fl, c := at(seg.Start)
			l.kind, l.block, l.col = mdPre, bi, int32(c)
			if blk.first < 0 {
				blk.first = fl
			}
			blk.last = fl
		}
		for k := 0; k < segs.Len(); k++ {
			mark(segs.At(k))
		}
		if n.HasClosure() {
			mark(n.ClosureLine)
		}
		b.d.blocks = append(b.d.blocks, blk)
	case (n.HTMLBlockType == ast.HTMLBlockType6 || n.HTMLBlockType == ast.HTMLBlockType7) && segs.Len() > 1 && depth < maxHTMLDepth:
		var sub []byte
		var subStarts, subCols, subLines []int
		for k := 1; k < segs.Len(); k++ {
			seg := segs.At(k)
			kk := sort.Search(len(starts), func(j int) bool { return starts[j] > seg.Start }) - 1
			subStarts = append(subStarts, len(sub))
			subCols = append(subCols, cols[kk]+seg.Start-starts[kk])
			subLines = append(subLines, fileLine[kk])
			v := seg.Value(src)
			sub = append(sub, v...)
			if len(v) == 0 || v[len(v)-1] != '\n' {
				sub = append(sub, '\n')
			}
		}
		b.parse(sub, subStarts, subCols, subLines, depth+1)
	}
}

// heading records a heading of the document at its first line.
func (b *mdBuilder) heading(n *ast.Heading, at func(int) (*mdLine, int, int), src []byte) {
	l, fl, _ := at(n.Pos())
	segs := n.Lines()
	last := fl
	if segs.Len() > 0 {
		_, last, _ = at(segs.At(segs.Len() - 1).Start)
	}
	var t []string
	for k := fl; k <= last; k++ {
		t = append(t, b.lines[k])
	}
	b.d.headings = append(b.d.headings, strings.Join(t, " "))
	l.heading = int32(len(b.d.headings))
}

// codeSpan records an inline code span on each line it spans: its text,
// trimmed, and where it starts (after the opening backticks) and ends.
func (b *mdBuilder) codeSpan(n *ast.CodeSpan, at func(int) (*mdLine, int, int), src []byte) {
	var cur *mdLine
	var buf []byte
	off, end := 0, 0
	same := "" // the line's own bytes that buf holds, when it holds one piece of it (no copy then)
	flush := func() {
		if cur != nil {
			text := same
			if text == "" {
				text = string(buf)
			}
			x := b.d.extOf(cur)
			x.spans = append(x.spans, span{strings.TrimSpace(text), off, end})
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			continue
		}
		seg := t.Segment
		l, fl, col := at(seg.Start)
		raw := seg.Value(src)
		v := bytes.TrimRight(raw, "\n")
		if l != cur {
			flush()
			cur, buf, off, same = l, buf[:0], col, ""
			if seg.Start > 0 && src[seg.Start-1] == ' ' && off > 0 {
				off-- // the half space the parser trimmed
			}
			if line := b.lines[fl]; col+len(v) <= len(line) && line[col:col+len(v)] == string(v) {
				same = line[col : col+len(v)] // buf is filled only if another piece follows
			} else {
				buf = append(buf, v...)
			}
		} else {
			if same != "" {
				buf = append(buf, same...)
				same = ""
			}
			buf = append(buf, v...)
		}
		end = col + len(v)
		if len(v) == len(raw) && seg.Stop < len(src) && src[seg.Stop] == ' ' {
			end++ // the half space the parser trimmed
		}
		end = min(end, len(b.lines[fl]))
	}
	flush()
}

// linkTitle records where a link's or image's title opens: a quotation
// mark there opens hidden text the agent reads, not a quotation.
func (b *mdBuilder) linkTitle(title []byte, pos int, at func(int) (*mdLine, int, int), src []byte) {
	if len(title) == 0 || pos < 0 {
		return
	}
	rest := src[pos:]
	for _, q := range []byte{'"', '\'', '('} {
		if k := bytes.Index(rest, append([]byte{q}, title...)); k >= 0 {
			l, _, col := at(pos + k)
			x := b.d.extOf(l)
			x.titles = append(x.titles, col)
			return
		}
	}
}

// blockCode returns the code of a fenced or indented block's lines from
// file line from on (after blockquote markers and list indentation), up
// to its closing line.
func blockCode(lines []string, d *mdDoc, b *mdBlock, from int) []string {
	code := make([]string, 0, max(0, min(b.last, len(lines)-1)-from+1))
	for k := from; k <= b.last && k < len(lines); k++ {
		l := d.line(k)
		if l.kind == mdFenceEnd {
			break
		}
		code = append(code, lines[k][min(int(l.col), len(lines[k])):])
	}
	return code
}

// preCode returns the code of a <pre> block's lines as a browser shows it
// and a person copies it: after the opening tag, before the closing one,
// tags dropped and character references decoded.
func preCode(lines []string, d *mdDoc, b *mdBlock) []string {
	var code []string
	for k := b.first; k <= b.last && k < len(lines); k++ {
		c := lines[k][min(int(d.line(k).col), len(lines[k])):]
		if k == b.first {
			c, _, _ = preOpen(c)
		}
		c, _ = preClose(c)
		code = append(code, preText(c))
	}
	return code
}

// inSpan reports whether byte i of line l of d is inside an inline code
// span.
func (d *mdDoc) inSpan(l *mdLine, i int) bool {
	for _, sp := range d.spans(l) {
		if i >= sp.off && i < sp.end {
			return true
		}
	}
	return false
}
