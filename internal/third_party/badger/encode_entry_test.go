package badger

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand"
	"testing"

	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/y"
)

// upstreamEncodeEntry is v4.9.6's logFile.encodeEntry, unchanged but for its name: the
// reference for Fuscia's allocation-free one.
func upstreamEncodeEntry(lf *logFile, buf *bytes.Buffer, e *Entry, offset uint32) (int, error) {
	h := header{
		klen:      uint32(len(e.Key)),
		vlen:      uint32(len(e.Value)),
		expiresAt: e.ExpiresAt,
		meta:      e.meta,
		userMeta:  e.UserMeta,
	}

	hash := crc32.New(y.CastagnoliCrcTable)
	writer := io.MultiWriter(buf, hash)

	var headerEnc [maxHeaderSize]byte
	sz := h.Encode(headerEnc[:])
	y.Check2(writer.Write(headerEnc[:sz]))
	if lf.encryptionEnabled() {
		eBuf := make([]byte, 0, len(e.Key)+len(e.Value))
		eBuf = append(eBuf, e.Key...)
		eBuf = append(eBuf, e.Value...)
		if err := y.XORBlockStream(
			writer, eBuf, lf.dataKey.Data, lf.generateIV(offset)); err != nil {
			return 0, y.Wrapf(err, "Error while encoding entry for vlog.")
		}
	} else {
		y.Check2(writer.Write(e.Key))
		y.Check2(writer.Write(e.Value))
	}
	var crcBuf [crc32.Size]byte
	binary.BigEndian.PutUint32(crcBuf[:], hash.Sum32())
	y.Check2(buf.Write(crcBuf[:]))
	return len(headerEnc[:sz]) + len(e.Key) + len(e.Value) + len(crcBuf), nil
}

// TestEncodeEntryMatchesUpstream checks Fuscia's change to logFile.encodeEntry (the checksum taken
// over the appended bytes instead of through an io.MultiWriter and a hash): the same bytes and
// length as upstream's for entries of every size, with and without encryption, appended after
// what the buffer already holds (the value log encodes several entries into one buffer).
func TestEncodeEntryMatchesUpstream(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	plain := &logFile{}
	encrypted := &logFile{
		dataKey: &pb.DataKey{Data: random(32)},
		baseIV:  random(12),
	}
	sizes := []int{0, 1, 15, 16, 17, 127, 128, 300, 4 << 10, 70 << 10}
	for _, lf := range []*logFile{plain, encrypted} {
		for _, klen := range []int{1, 9, 300} {
			for _, vlen := range sizes {
				for _, prefix := range []int{0, 37} {
					e := &Entry{
						Key:       random(klen),
						Value:     random(vlen),
						ExpiresAt: rng.Uint64() >> uint(rng.Intn(64)),
						UserMeta:  byte(rng.Intn(256)),
						meta:      byte(rng.Intn(256)),
					}
					offset := rng.Uint32()
					before := random(prefix)
					var got, want bytes.Buffer
					got.Write(before)
					want.Write(before)
					gotN, err := lf.encodeEntry(&got, e, offset)
					if err != nil {
						t.Fatalf("encodeEntry: %v", err)
					}
					wantN, err := upstreamEncodeEntry(lf, &want, e, offset)
					if err != nil {
						t.Fatalf("upstream encodeEntry: %v", err)
					}
					if gotN != wantN || !bytes.Equal(got.Bytes(), want.Bytes()) {
						t.Fatalf("encrypted=%v key %d value %d prefix %d: got %d bytes %x…, upstream %d bytes %x…",
							lf.encryptionEnabled(), klen, vlen, prefix, gotN, head(got.Bytes()), wantN, head(want.Bytes()))
					}
				}
			}
		}
	}
}

func head(b []byte) []byte { return b[:min(len(b), 48)] }

// TestEncodeEntryAllocations guards the point of the change: encoding an unencrypted entry into
// a buffer with room allocates nothing.
func TestEncodeEntryAllocations(t *testing.T) {
	lf := &logFile{}
	e := &Entry{Key: []byte("journal/run/0001/entry/0001"), Value: bytes.Repeat([]byte("v"), 200)}
	var buf bytes.Buffer
	buf.Grow(1 << 10)
	allocs := testing.AllocsPerRun(100, func() {
		buf.Reset()
		if _, err := lf.encodeEntry(&buf, e, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("encodeEntry allocated %.1f times per entry; want 0", allocs)
	}
}
