package badger

import (
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/y"
)

// TestOpenRefusesZSTD: this copy has no zstd (y/zstd.go), so Open refuses a store configured for
// it with y.ErrNoZSTD instead of writing tables it could not read back.
func TestOpenRefusesZSTD(t *testing.T) {
	opt := DefaultOptions(t.TempDir()).WithLogger(nil).WithCompression(options.ZSTD)
	db, err := Open(opt)
	if err == nil {
		db.Close()
		t.Fatal("Open with options.ZSTD succeeded")
	}
	if !errors.Is(err, y.ErrNoZSTD) {
		t.Fatalf("Open with options.ZSTD: %v, want y.ErrNoZSTD", err)
	}
}
