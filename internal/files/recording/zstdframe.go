// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// zstdContentSize checks that p is exactly one zstd frame (RFC 8878
// section 3.1.1) without a dictionary and returns the content size its
// header declares. It walks the frame's block headers without decoding
// anything, so a payload of several frames or a skippable frame is refused
// before a byte is inflated. A frame that does not declare its size (format
// 1 wrote such frames for payloads under 256 bytes) is refused when
// needSize, and otherwise sized by its blocks (at most 128 KiB each), with
// declared false.
func zstdContentSize(p []byte, needSize bool) (size uint64, declared bool, err error) {
	var h zstd.Header
	if err := h.Decode(p); err != nil {
		return 0, false, fmt.Errorf("zstd frame header: %w", err)
	}
	switch {
	case h.Skippable:
		return 0, false, errors.New("skippable zstd frame")
	case !h.HasFCS && needSize:
		return 0, false, errors.New("zstd frame does not declare its content size")
	case h.DictionaryID != 0:
		return 0, false, errors.New("zstd frame needs a dictionary")
	}
	end, bound, err := zstdFrameEnd(p, h.HeaderSize, h.HasCheckSum)
	if err != nil {
		return 0, false, err
	}
	if end != len(p) {
		return 0, false, fmt.Errorf("%d bytes after the zstd frame (one frame per record)", len(p)-end)
	}
	if !h.HasFCS {
		return bound, false, nil
	}
	return h.FrameContentSize, true, nil
}

// zstdMaxBlock is the most bytes one zstd block decodes to.
const zstdMaxBlock = 128 << 10

// zstdFrameEnd returns the offset just past the frame whose blocks start
// at off, and the most bytes its blocks can decode to: 3-byte block
// headers (bit 0 last block, bits 1-2 type, bits 3-23 size), then the
// 4-byte content checksum when the frame has one.
func zstdFrameEnd(p []byte, off int, checksum bool) (end int, bound uint64, err error) {
	for {
		if off+3 > len(p) {
			return 0, 0, errors.New("zstd frame ends inside a block header")
		}
		bh := int(p[off]) | int(p[off+1])<<8 | int(p[off+2])<<16
		off += 3
		size := bh >> 3
		switch (bh >> 1) & 3 {
		case 0: // raw
			bound += uint64(size)
		case 1: // RLE: one byte repeated size times
			bound += uint64(size)
			size = 1
		case 2:
			bound += zstdMaxBlock
		case 3:
			return 0, 0, errors.New("zstd block of reserved type")
		}
		if size > len(p)-off {
			return 0, 0, errors.New("zstd frame ends inside a block")
		}
		off += size
		if bh&1 == 1 {
			break
		}
	}
	if checksum {
		off += 4
		if off > len(p) {
			return 0, 0, errors.New("zstd frame ends inside its checksum")
		}
	}
	return off, bound, nil
}

// inflate decodes the single zstd frame p into *buf (reused across
// records, grown only to the largest content size met), after checking
// that size against limit and charging it to b.
func inflate(dec *zstd.Decoder, buf *[]byte, p []byte, limit int, needSize bool, b *budget) ([]byte, error) {
	n, declared, err := frameSize(p, limit, needSize)
	if err != nil {
		return nil, err
	}
	if err := b.charge(n, "zstd frame"); err != nil {
		return nil, err
	}
	if cap(*buf) < n {
		*buf = make([]byte, 0, n+n/4) // room for the next, slightly larger one
	}
	return inflateInto(dec, (*buf)[:0:n], p, declared)
}

// frameSize checks that p is a single zstd frame (zstdContentSize)
// declaring at most limit bytes, and returns its size.
func frameSize(p []byte, limit int, needSize bool) (n int, declared bool, err error) {
	size, declared, err := zstdContentSize(p, needSize)
	if err != nil {
		return 0, false, err
	}
	if size > uint64(max(limit, 0)) {
		return 0, false, fmt.Errorf("zstd frame declares %d bytes, above the %d-byte limit", size, limit)
	}
	return int(size), declared, nil
}

// inflateInto decodes the zstd frame p into dst, whose capacity is the
// frame's size (frameSize), and checks that the frame held that many
// bytes when it declared them. With WithDecodeAllCapLimit the decoder
// writes no more than cap(dst) bytes, so a frame lying about its size
// cannot grow the buffer.
func inflateInto(dec *zstd.Decoder, dst, p []byte, declared bool) ([]byte, error) {
	out, err := dec.DecodeAll(p, dst[:0])
	if err != nil {
		return nil, err
	}
	if declared && len(out) != cap(dst) {
		return nil, fmt.Errorf("zstd frame holds %d bytes, declares %d", len(out), cap(dst))
	}
	return out, nil
}

// newDecoder returns a zstd decoder for payloads of at most limit bytes,
// for DecodeAll, which writes no more than its destination's capacity.
func newDecoder(limit int) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false),
		zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(uint64(limit)))
}
