package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Inspection is what a component package or a Wasm binary is: what `fuscia component
// inspect` prints.
type Inspection struct {
	// File is the file inspected, as given.
	File string
	// Package is set when File is a package, and not a Wasm binary.
	Package bool
	// Manifest is the package's manifest, decoded (strictly, fields of the wrong type left
	// empty) whether or not it is valid; nil for a Wasm file, or when manifest.json is not a
	// JSON object.
	Manifest *Manifest
	// ABI is the manifest's "abi" for a package (0 when it has none), and for a Wasm file the
	// abi its kind is packaged with (Description.ABI).
	ABI int
	// Wasm describes the package's component.wasm or the Wasm file. When a package's
	// component.wasm cannot be read as WebAssembly, only its Size and Digest are set (Kind is
	// "") and Problems says why.
	Wasm Description
	// Problems are what install would refuse of the package (its manifest, its digest, its
	// component.wasm against the manifest's abi), or what keeps a Wasm file from fitting any
	// world; one line each, none when the package would install.
	Problems []string
	// Hint says what to do about Problems, or is "".
	Hint string
}

// Inspect reads a package (FILE.fcpkg) or a Wasm binary (a core module or a component) and
// says what it is. Which of the two it is comes from the file's first bytes: a gzip header or
// the Wasm magic.
//
// A package is read exactly as Install reads it (the same refusals of its entries and the same
// limits), without writing anything, and checked as Install checks it; what Install would
// refuse of its contents is listed in Problems rather than returned, so that a package can be
// inspected to see why it is refused. A file that is neither, that does not exist, a package
// whose archive is malformed, and a Wasm file that cannot be parsed are *RefusedError (wrapping
// fs.ErrNotExist for a missing file); other errors are I/O failures.
func Inspect(file string) (*Inspection, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s does not exist", file),
			Hint: "Give a package made by fuscia component pack (NAME-VERSION.fcpkg) or a Wasm binary (component.wasm).", Err: err}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is a directory", file),
			Hint: "Give a package (FILE.fcpkg) or a Wasm binary; to inspect a component directory, inspect its component.wasm, or pack it first."}
	}
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return inspectPackage(file, f)
	case bytes.Equal(head, []byte(wasmMagic)):
		return inspectWasm(file, f, fi.Size())
	}
	return nil, &RefusedError{Reason: fmt.Sprintf("%s is neither a component package (a gzip'd tar) nor a WebAssembly binary: it starts with neither a gzip header nor \\0asm", file),
		Hint: "Give a package made by fuscia component pack (NAME-VERSION.fcpkg) or a Wasm binary (component.wasm)."}
}

// inspectPackage reads a package as Install does, in memory, and checks its contents.
func inspectPackage(file string, r io.Reader) (*Inspection, error) {
	x := &extractor{pkg: file, files: map[string]bool{}, dirs: map[string]bool{}}
	if err := x.extract(r); err != nil {
		return nil, err
	}
	if err := x.complete(); err != nil {
		return nil, err
	}
	m, pc := checkPackage(x.manifest, x.wasmDigest, x.wasm)
	in := &Inspection{File: file, Package: true, Manifest: m, Problems: []string{}, Hint: pc.hint}
	if m != nil {
		in.ABI = m.ABI
	}
	// An error here is among pc's reasons already: checkBinary parsed the same bytes.
	in.Wasm, _ = describeWasm(WasmFile, x.wasm)
	for _, reason := range pc.reasons {
		in.Problems = append(in.Problems, problemLines(errors.New(reason))...)
	}
	if len(in.Problems) == 0 {
		in.Hint = ""
	}
	return in, nil
}

// inspectWasm describes a Wasm file of size bytes.
func inspectWasm(file string, r io.Reader, size int64) (*Inspection, error) {
	if size > packageLimit {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is %d bytes, more than the limit of %s of a package", file, size, sizeText(packageLimit))}
	}
	wasm, err := io.ReadAll(&limitReader{r: r, n: packageLimit})
	if errors.Is(err, errTooLarge) {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is more than the limit of %s of a package", file, sizeText(packageLimit))}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	d, err := describeWasm(file, wasm)
	if err != nil {
		return nil, &RefusedError{Reason: err.Error(),
			Hint: "The file is not a WebAssembly binary the host reads, or it is damaged; build it again."}
	}
	in := &Inspection{File: file, ABI: d.ABI, Wasm: d, Problems: d.Problems}
	if len(d.Problems) > 0 {
		_, in.Hint = checkBinary(d.ABI, wasm)
	}
	return in, nil
}
