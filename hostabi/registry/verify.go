package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrModified is matched by the error of Verify when an installed component.wasm is not the
// file that was installed (a *ModifiedError).
var ErrModified = errors.New("installed component was modified")

// ModifiedError says which installed component's module changed, and both digests.
type ModifiedError struct {
	Ref  string // org/name@version
	Path string // the component.wasm
	Got  string // the file's digest now
	Want string // the digest its manifest recorded at install
}

func (e *ModifiedError) Error() string {
	return fmt.Sprintf("%s: %s is %s, but %s was installed (the digest in its manifest, which plans lock); the file was modified or replaced after install, so it is not run. Reinstall the component: fuscia component remove %s, then fuscia component install its .fcpkg",
		e.Ref, e.Path, e.Got, e.Want, e.Ref)
}

// Is makes a ModifiedError match ErrModified.
func (e *ModifiedError) Is(target error) bool { return target == ErrModified }

// Verify hashes the component.wasm of an installed version and checks it against the digest
// its manifest recorded at install (Installed.Digest, which a plan locks). Install checked the
// two agree, and nothing in Fuscia writes an installed version again, so a difference means
// the file was changed or replaced behind Fuscia's back: the error is a *ModifiedError.
// Hashing costs about a millisecond per megabyte.
func Verify(inst Installed) error {
	path := filepath.Join(inst.Dir, WasmFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: cannot read %s: %w; reinstall the component", inst.Ref(), path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s: cannot read %s: %w; reinstall the component", inst.Ref(), path, err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != inst.Digest {
		return &ModifiedError{Ref: inst.Ref(), Path: path, Got: got, Want: inst.Digest}
	}
	return nil
}
