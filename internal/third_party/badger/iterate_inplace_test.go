package badger

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2/z"
)

// replayed is what iterate hands fn for one entry, copied (the entry's bytes are valid only
// during the call).
type replayed struct {
	Key, Value     string
	Meta, UserMeta byte
	ExpiresAt      uint64
	Offset, HLen   int
	VP             valuePointer
}

// replay iterates lf from its start with or without the in-place decoder and returns what fn
// saw, the end offset and the error's text.
func replay(lf *logFile, inPlace bool) ([]replayed, uint32, string) {
	var got []replayed
	end, err := lf.iterateFrom(0, func(e Entry, vp valuePointer) error {
		got = append(got, replayed{string(e.Key), string(e.Value), e.meta, e.UserMeta, e.ExpiresAt, int(e.offset), e.hlen, vp})
		return nil
	}, inPlace)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return got, end, msg
}

// TestIterateInPlace checks Fuscia's in-place decoder of log entries (safeRead.entryAt) against
// upstream's reader (safeRead.Entry): on a memtable log a store kept at close — single sets,
// transactions of several keys, deletes, expiring entries, values of many sizes — and on
// thousands of damaged copies of it (bytes flipped, the file cut short, ranges zeroed), both
// hand fn the same entries and stop at the same offset with the same error.
func TestIterateInPlace(t *testing.T) {
	dir := t.TempDir()
	opt := DefaultOptions(dir).WithLogger(nil)
	opt.ValueThreshold = 1 << 10
	opt.KeepMemTableOnClose = 1 << 20
	db, err := Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		err := db.Update(func(txn *Txn) error {
			for k := 0; k < 1+i%4; k++ {
				key := []byte(fmt.Sprintf("key-%04d-%d", i, k))
				switch i % 7 {
				case 3:
					if err := txn.Delete(key); err != nil {
						return err
					}
				case 5:
					e := NewEntry(key, []byte("expiring")).WithTTL(time.Hour).WithMeta(7)
					if err := txn.SetEntry(e); err != nil {
						return err
					}
				default:
					value := make([]byte, rng.Intn(300))
					rng.Read(value)
					if err := txn.Set(key, value); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wal := db.mt.wal
	if wal.encryptionEnabled() {
		t.Fatal("the log is encrypted")
	}

	want, wantEnd, wantErr := replay(wal, false)
	got, gotEnd, gotErr := replay(wal, true)
	if len(want) < 600 {
		t.Fatalf("the reader saw %d entries; the log should hold more than 600", len(want))
	}
	if !reflect.DeepEqual(got, want) || gotEnd != wantEnd || gotErr != wantErr {
		t.Fatalf("in place: %d entries, end %d, error %q; reader: %d entries, end %d, error %q",
			len(got), gotEnd, gotErr, len(want), wantEnd, wantErr)
	}

	// Damaged copies: the bytes up to the end of the entries and a little beyond.
	size := int(wantEnd) + 64
	if size > len(wal.Data) {
		size = len(wal.Data)
	}
	for i := 0; i < 3000; i++ {
		data := append([]byte(nil), wal.Data[:size]...)
		switch i % 3 {
		case 0:
			for n := 1 + rng.Intn(3); n > 0; n-- {
				data[vlogHeaderSize+rng.Intn(size-vlogHeaderSize)] ^= byte(1 + rng.Intn(255))
			}
		case 1:
			data = data[:vlogHeaderSize+rng.Intn(size-vlogHeaderSize)]
		case 2:
			at := vlogHeaderSize + rng.Intn(size-vlogHeaderSize)
			clear(data[at:min(size, at+1+rng.Intn(40))])
		}
		lf := &logFile{MmapFile: &z.MmapFile{Data: data}, fid: wal.fid, path: wal.path}
		want, wantEnd, wantErr := replay(lf, false)
		got, gotEnd, gotErr := replay(lf, true)
		if !reflect.DeepEqual(got, want) || gotEnd != wantEnd || gotErr != wantErr {
			t.Fatalf("damaged copy %d: in place %d entries, end %d, error %q; reader %d entries, end %d, error %q",
				i, len(got), gotEnd, gotErr, len(want), wantEnd, wantErr)
		}
	}
}

// TestIterateInPlaceVarintOverflow: a header whose key length is a varint of more than 64 bits
// fails the replay with the reader's error in both decoders.
func TestIterateInPlaceVarintOverflow(t *testing.T) {
	data := make([]byte, vlogHeaderSize+64)
	entry := data[vlogHeaderSize:]
	entry[0], entry[1] = 0, 0
	for i := 2; i < 13; i++ {
		entry[i] = 0xff
	}
	lf := &logFile{MmapFile: &z.MmapFile{Data: data}, fid: 1, path: "overflow"}
	_, _, wantErr := replay(lf, false)
	_, _, gotErr := replay(lf, true)
	if wantErr == "" || gotErr != wantErr {
		t.Fatalf("in place: %q; reader: %q", gotErr, wantErr)
	}
}
