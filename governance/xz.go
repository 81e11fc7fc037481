package governance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// The xz container is read here and only its LZMA2 data is given to
// github.com/ulikunitz/xz/lzma. The package's own xz reader sizes each
// block's dictionary by what the block header declares, up to 1.5 GiB,
// and allocates it before decoding a byte; here the index at the end of
// the file is read first, so that every block's header, sizes and
// dictionary are checked before anything is decoded, and a dictionary
// is never larger than the block's declared output (which the byte
// budget bounds). Checksums are not verified: the bytes are scanned, not
// installed, and a block that decodes to other than its declared size is
// an error.

const (
	xzMaxBlocks = 1024 // blocks in one stream
	lzma2Filter = 0x21
)

// xzBlock is one block's LZMA2 data, its declared output and dictionary.
type xzBlock struct {
	data       []byte
	size, dict int64
}

// newXZReader checks an xz file (one stream, then optional stream
// padding) and returns a reader of its content and the content's
// declared size. Concatenated streams and filters other than a single
// LZMA2 (the xz tool's default) are refused, naming what was expected.
func newXZReader(data []byte) (io.Reader, int64, error) {
	if len(data) < 32 || !hasPrefix(data, "\xfd7zXZ\x00") {
		return nil, 0, errors.New("want an xz stream header and footer, got a file too short for them")
	}
	flags := data[6:8]
	if flags[0] != 0 || flags[1]&0xf0 != 0 {
		return nil, 0, fmt.Errorf("stream flags %x: want 00 0X", flags)
	}
	checkSize := [16]int{0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64}[flags[1]&0x0f]
	end := len(data)
	for end >= 44 && string(data[end-4:end]) == "\x00\x00\x00\x00" {
		end -= 4 // stream padding
	}
	foot := data[end-12 : end]
	if string(foot[10:12]) != "YZ" || !bytes.Equal(foot[8:10], flags) {
		return nil, 0, errors.New("want one xz stream ending in its footer (concatenated streams are not read)")
	}
	indexSize := (int64(binary.LittleEndian.Uint32(foot[4:8])) + 1) * 4
	idx := int64(end-12) - indexSize
	if idx < 12 || data[idx] != 0 {
		return nil, 0, errors.New("want the index where the footer says it is")
	}
	rd := bytes.NewReader(data[idx+1 : end-12])
	n, err := binary.ReadUvarint(rd)
	if err != nil || n > xzMaxBlocks {
		return nil, 0, fmt.Errorf("want at most %d blocks in the index", xzMaxBlocks)
	}
	blocks := make([]xzBlock, 0, n)
	pos, total := int64(12), int64(0)
	for range n {
		unpadded, err1 := binary.ReadUvarint(rd)
		size, err2 := binary.ReadUvarint(rd)
		if err1 != nil || err2 != nil || unpadded > uint64(len(data)) || size > 1<<40 {
			return nil, 0, errors.New("want an index record of two sizes")
		}
		b, err := xzBlockAt(data[:idx], pos, int64(unpadded), int64(size), checkSize)
		if err != nil {
			return nil, 0, err
		}
		blocks = append(blocks, b)
		pos += (int64(unpadded) + 3) &^ 3
		total += int64(size)
	}
	if pos != idx {
		return nil, 0, errors.New("want the blocks to end where the index begins")
	}
	return &xzReader{blocks: blocks}, total, nil
}

// xzBlockAt checks the block at pos whose index record is unpadded and
// size: a header with one LZMA2 filter, and sizes that agree.
func xzBlockAt(data []byte, pos, unpadded, size int64, checkSize int) (xzBlock, error) {
	if pos >= int64(len(data)) || data[pos] == 0 {
		return xzBlock{}, fmt.Errorf("want a block header at %d", pos)
	}
	hsize := (int64(data[pos]) + 1) * 4
	if pos+unpadded > int64(len(data)) || unpadded < hsize+int64(checkSize)+1 {
		return xzBlock{}, fmt.Errorf("want the block at %d inside the file", pos)
	}
	h := bytes.NewReader(data[pos+2 : pos+hsize-4])
	bflags := data[pos+1]
	if bflags&0x3c != 0 || bflags&0x03 != 0 {
		return xzBlock{}, fmt.Errorf("block at %d: want one filter (LZMA2), got flags %02x", pos, bflags)
	}
	comp := unpadded - hsize - int64(checkSize)
	if bflags&0x40 != 0 {
		if v, err := binary.ReadUvarint(h); err != nil || int64(v) != comp {
			return xzBlock{}, fmt.Errorf("block at %d: compressed size disagrees with the index", pos)
		}
	}
	if bflags&0x80 != 0 {
		if v, err := binary.ReadUvarint(h); err != nil || int64(v) != size {
			return xzBlock{}, fmt.Errorf("block at %d: uncompressed size disagrees with the index", pos)
		}
	}
	id, err1 := binary.ReadUvarint(h)
	psize, err2 := binary.ReadUvarint(h)
	prop, err3 := h.ReadByte()
	if err1 != nil || err2 != nil || err3 != nil || id != lzma2Filter || psize != 1 || prop > 40 {
		return xzBlock{}, fmt.Errorf("block at %d: want the LZMA2 filter (21), got filter %x", pos, id)
	}
	dict := int64(0xffffffff)
	if prop < 40 {
		dict = int64(2|prop&1) << (prop/2 + 11)
	}
	return xzBlock{data: data[pos+hsize : pos+hsize+comp], size: size, dict: dict}, nil
}

// xzReader decodes the blocks one after the other.
type xzReader struct {
	blocks    []xzBlock
	cur       io.Reader
	got, want int64
}

func (x *xzReader) Read(p []byte) (int, error) {
	for {
		if x.cur == nil {
			if len(x.blocks) == 0 {
				return 0, io.EOF
			}
			b := x.blocks[0]
			x.blocks = x.blocks[1:]
			// The dictionary need not be larger than the block's output,
			// nor than what the byte budget lets the scanner read.
			dict := max(lzma.MinDictCap, int(min(b.dict, b.size, 2*maxArchiveBytes)))
			r, err := lzma.Reader2Config{DictCap: dict}.NewReader2(bytes.NewReader(b.data))
			if err != nil {
				return 0, err
			}
			x.cur, x.got, x.want = io.LimitReader(r, b.size), 0, b.size
		}
		n, err := x.cur.Read(p)
		x.got += int64(n)
		if err == io.EOF {
			if x.got != x.want {
				return n, fmt.Errorf("a block decodes to %d bytes, its index says %d", x.got, x.want)
			}
			x.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}
