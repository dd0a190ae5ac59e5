package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

func main() {
	f, _ := os.Open(os.Args[1])
	r := bufio.NewReaderSize(f, 64<<10)
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	var hdr [12]byte
	var p, out []byte
	io.ReadFull(r, hdr[:])
	var stored, raw, n int
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		size := int(binary.LittleEndian.Uint32(hdr[4:]))
		p = make([]byte, size)
		io.ReadFull(r, p)
		if hdr[1] != 0 {
			out, _ = dec.DecodeAll(p, out[:0])
			stored += size
			raw += len(out)
			n++
			if n == 101 && len(os.Args) > 2 && hdr[0] == 4 {
				os.WriteFile(os.Args[2], out, 0o644)
			}
		}
	}
	fmt.Println("frames", n, "stored", stored, "raw", raw)
}
