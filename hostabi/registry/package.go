package registry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Limits of a package, checked by Pack and Install.
const (
	// MaxPackageSize bounds the uncompressed size of a package (its whole tar stream).
	MaxPackageSize = 512 << 20
	// MaxManifestSize bounds manifest.json.
	MaxManifestSize = 1 << 20
	// maxEntries bounds the number of entries of a package.
	maxEntries = 10_000
)

// packageLimit is MaxPackageSize; tests lower it.
var packageLimit int64 = MaxPackageSize

// packageEntry is one file of a package being packed: its name in the archive, and its bytes or
// the file to copy them from.
type packageEntry struct {
	name string
	data []byte // when not nil
	src  string // otherwise, the file to copy
	size int64
}

// Pack packs the component directory dir into the package file out, and returns the packed
// manifest.
//
// dir holds manifest.json and component.wasm, and optionally README.md and an assets/ directory
// (packed recursively); anything else in dir is not packed. Symbolic links are followed for the
// three top-level files and refused inside assets/.
//
// The packed manifest is the source manifest with "digest" set to the sha256 of component.wasm
// (whatever the source said: empty, absent or stale), re-encoded canonically (fields in the
// order of Manifest, map keys sorted, two-space indent). Pack checks the manifest and the module as Install does and refuses
// (*RefusedError) what Install would refuse.
//
// The package is reproducible: entries sorted by name, regular files only (mode 0644, owner 0,
// no owner names, modification time the Unix epoch), gzip without name or time. It is written to
// a temporary file beside out and renamed over out, so out is never half-written.
func Pack(dir, out string) (*Manifest, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s does not exist", dir),
			Hint: "Give the directory that holds the component's manifest.json and component.wasm."}
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is not a directory", dir),
			Hint: "Give the directory that holds the component's manifest.json and component.wasm."}
	}
	mdata, err := readSourceFile(dir, ManifestFile, MaxManifestSize)
	if err != nil {
		return nil, err
	}
	wasm, err := readSourceFile(dir, WasmFile, packageLimit)
	if err != nil {
		return nil, err
	}
	digest := sha256Digest(wasm)

	m, p := decodeManifest(mdata)
	if m != nil {
		// The digest is Pack's to write: drop what was wrong with the source's.
		kept := p.list[:0]
		for _, line := range p.list {
			if !strings.HasPrefix(line, fmt.Sprintf("%s: %q ", ManifestFile, "digest")) {
				kept = append(kept, line)
			}
		}
		p.list = kept
		delete(p.bad, "digest")
		m.Digest = digest
		m.check(p)
	}
	var reasons []string
	merr := p.err()
	if merr != nil {
		reasons = append(reasons, merr.Error())
	}
	abi := 0
	if m != nil && !p.bad["abi"] {
		abi = m.ABI
	}
	werr, whint := checkBinary(abi, wasm)
	if werr != nil {
		reasons = append(reasons, werr.Error())
	}
	if len(reasons) > 0 {
		hint := fmt.Sprintf("Fix %s and pack the component again.", filepath.Join(dir, ManifestFile))
		if merr == nil {
			hint = whint
		}
		return nil, &RefusedError{Reason: strings.Join(reasons, "\n"), Hint: hint, Err: merr}
	}

	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is a directory", out),
			Hint: fmt.Sprintf("Give the package file to write, like %s.", filepath.Join(out, m.PackageFileName()))}
	}
	packed, err := encodeManifest(m)
	if err != nil {
		return nil, err
	}
	entries := []packageEntry{
		{name: ManifestFile, data: packed, size: int64(len(packed))},
		{name: WasmFile, data: wasm, size: int64(len(wasm))},
	}
	if readme, err := readSourceFile(dir, ReadmeFile, packageLimit); err == nil {
		entries = append(entries, packageEntry{name: ReadmeFile, data: readme, size: int64(len(readme))})
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	assets, err := assetEntries(dir)
	if err != nil {
		return nil, err
	}
	entries = append(entries, assets...)
	if len(entries) > maxEntries {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s holds %d files; a package holds at most %d", dir, len(entries), maxEntries)}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	if err := writePackage(out, entries); err != nil {
		return nil, err
	}
	return m, nil
}

// readSourceFile reads dir/name for Pack, following a symbolic link. A missing file is a
// *RefusedError wrapping fs.ErrNotExist.
func readSourceFile(dir, name string, limit int64) ([]byte, error) {
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s has no %s", dir, name),
			Hint: "A component directory holds manifest.json and component.wasm, and optionally README.md and assets/.",
			Err:  err}
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is not a regular file", p)}
	}
	if fi.Size() > limit {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is %d bytes, more than the limit of %s", p, fi.Size(), sizeText(limit))}
	}
	return os.ReadFile(p)
}

// assetEntries lists the regular files below dir/assets, refusing links and special files.
func assetEntries(dir string) ([]packageEntry, error) {
	root := filepath.Join(dir, AssetsDir)
	fi, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &RefusedError{Reason: fmt.Sprintf("%s is not a directory", root),
			Hint: "assets/ is a directory of files the component ships with."}
	}
	var entries []packageEntry
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return &RefusedError{Reason: fmt.Sprintf("%s is a symbolic link; a package holds regular files only", p),
				Hint: "Copy the file it points to into assets/ instead."}
		case !d.Type().IsRegular():
			return &RefusedError{Reason: fmt.Sprintf("%s is not a regular file; a package holds regular files only", p)}
		}
		if _, _, reason := entryName(name); reason != "" {
			return &RefusedError{Reason: fmt.Sprintf("%s cannot be packed: its name %s", p, reason)}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entries = append(entries, packageEntry{name: name, src: p, size: info.Size()})
		return nil
	})
	return entries, err
}

// writePackage writes entries (sorted) as a gzip'd tar to out, through a temporary file.
func writePackage(out string, entries []packageEntry) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zw := gzip.NewWriter(tmp) // zero Header: no name, no modification time
	cw := &countingWriter{w: zw, limit: packageLimit}
	tw := tar.NewWriter(cw)
	for _, e := range entries {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     e.name,
			Size:     e.size,
			Mode:     0o644,
			ModTime:  time.Unix(0, 0),
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return packWriteError(err)
		}
		if e.data != nil {
			_, err = tw.Write(e.data)
		} else {
			err = copyFile(tw, e.src, e.size)
		}
		if err != nil {
			return packWriteError(err)
		}
	}
	if err := tw.Close(); err != nil {
		return packWriteError(err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

func packWriteError(err error) error {
	if errors.Is(err, errTooLarge) {
		return &RefusedError{Reason: fmt.Sprintf("the package would be more than %s uncompressed", sizeText(packageLimit)),
			Hint: "Ship fewer or smaller assets."}
	}
	return err
}

// copyFile copies exactly size bytes of the file src to w (the size the header announced).
func copyFile(w io.Writer, src string, size int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, io.LimitReader(f, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s changed while it was being packed", src)
	}
	return nil
}

// countingWriter fails with errTooLarge once more than limit bytes are written.
type countingWriter struct {
	w     io.Writer
	n     int64
	limit int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > c.limit {
		return 0, errTooLarge
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var errTooLarge = errors.New("too large")

// encodeManifest encodes a manifest canonically, as Pack writes it.
func encodeManifest(m *Manifest) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// entryName checks a tar entry name and returns it cleaned: without a leading "./" or a trailing
// "/". root is true for "." (the archive's root directory). reason says why the name is refused,
// or is "".
func entryName(raw string) (name string, root bool, reason string) {
	name = strings.TrimPrefix(raw, "./")
	name = strings.TrimSuffix(name, "/")
	switch {
	case raw == "." || raw == "./":
		return "", true, ""
	case name == "":
		return "", false, "is empty"
	case strings.ContainsAny(name, "\\\x00"):
		return "", false, "contains a backslash or a NUL byte"
	case strings.HasPrefix(name, "/"):
		return "", false, "is an absolute path"
	case name == ".." || strings.HasPrefix(name, "../") || strings.HasSuffix(name, "/..") || strings.Contains(name, "/../"):
		return "", false, "leads out of the package (..)"
	case path.Clean(name) != name:
		return "", false, "is not a clean path"
	}
	return name, false, ""
}

// allowedFile reports whether a package may hold a regular file of this (clean) name.
func allowedFile(name string) bool {
	switch name {
	case ManifestFile, WasmFile, ReadmeFile:
		return true
	}
	return strings.HasPrefix(name, AssetsDir+"/")
}

// allowedDir reports whether a package may hold a directory entry of this (clean) name.
func allowedDir(name string) bool {
	return name == AssetsDir || strings.HasPrefix(name, AssetsDir+"/")
}

// Install installs the package file pkgFile into componentsDir (created if needed), as
// componentsDir/<org>--<name>--<version>/.
//
// It reads the package defensively: only regular files named manifest.json, component.wasm,
// README.md and assets/… (and directories below assets/) are accepted; absolute names, "..",
// links, devices and duplicate entries are refused; the package may not be more than
// MaxPackageSize uncompressed, nor the manifest more than MaxManifestSize. It then checks the
// manifest (ParseManifest), that its digest is the sha256 of component.wasm, and component.wasm
// against the manifest's "abi" (CheckABI: the exports of a core module of the host ABI v1, or
// the outer imports and exports of a component of the world), reporting every problem at once.
// All of these refusals are *RefusedError.
//
// The package is extracted into a temporary directory below componentsDir (its name starts with
// ".", so List and Find ignore it) and renamed into place: an install is complete or absent.
//
// Installing a version that is installed already is a no-op when the digests are the same (the
// result has AlreadyInstalled set) and is refused when they differ: an installed version never
// changes.
func Install(componentsDir, pkgFile string) (Installed, error) {
	f, err := os.Open(pkgFile)
	if errors.Is(err, fs.ErrNotExist) {
		return Installed{}, &RefusedError{Reason: fmt.Sprintf("%s does not exist", pkgFile),
			Hint: "Give the path of a package made by fuscia component pack (NAME-VERSION.fcpkg).", Err: err}
	}
	if err != nil {
		return Installed{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return Installed{}, &RefusedError{Reason: fmt.Sprintf("%s is a directory, not a package", pkgFile),
			Hint: "Pack the directory first with fuscia component pack DIR -o FILE.fcpkg, then install FILE.fcpkg."}
	}
	// Private like the home it is in (and creates when missing: MkdirAll gives parents this mode).
	if err := os.MkdirAll(componentsDir, 0o700); err != nil {
		return Installed{}, err
	}
	tmp, err := os.MkdirTemp(componentsDir, ".install-")
	if err != nil {
		return Installed{}, err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.RemoveAll(tmp)
		}
	}()

	x := &extractor{pkg: pkgFile, dir: tmp, files: map[string]bool{}, dirs: map[string]bool{}}
	if err := x.extract(f); err != nil {
		return Installed{}, err
	}
	m, err := x.check()
	if err != nil {
		return Installed{}, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return Installed{}, err
	}

	target := filepath.Join(componentsDir, installDirName(m.Name, m.Version))
	if inst, found, err := existing(target, m); found {
		return inst, err
	}
	if err := os.Rename(tmp, target); err != nil {
		// Another install of the same version may have won the race.
		if inst, found, err := existing(target, m); found {
			return inst, err
		}
		return Installed{}, err
	}
	renamed = true
	return Installed{Source: m.Name, Version: m.Version, Digest: m.Digest, Dir: target, Manifest: x.manifest, Parsed: m}, nil
}

// existing checks a version that is installed already in target: found is false when there is
// none. The same digest is a no-op; another is refused.
func existing(target string, m *Manifest) (inst Installed, found bool, err error) {
	if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
		return Installed{}, false, nil
	} else if err != nil {
		return Installed{}, true, err
	}
	ref := m.Ref()
	raw, err := os.ReadFile(filepath.Join(target, ManifestFile))
	var old *Manifest
	if err == nil {
		old = decodeLenient(raw)
	}
	if old == nil {
		return Installed{}, true, &RefusedError{
			Reason: fmt.Sprintf("%s is already installed in %s, but its manifest cannot be read; remove it first with `fuscia component remove %s`", ref, target, ref)}
	}
	if old.Digest != m.Digest {
		return Installed{}, true, &RefusedError{
			Reason: fmt.Sprintf("%s is already installed with digest %s; remove it first with `fuscia component remove %s`", ref, old.Digest, ref),
			Hint: fmt.Sprintf("This package's component.wasm is %s. An installed version never changes, so that the digests locked by fuscia plan stay valid: give a new build a new version, or remove the installed one first.",
				m.Digest)}
	}
	return Installed{Source: m.Name, Version: m.Version, Digest: old.Digest, Dir: target, Manifest: raw, Parsed: old,
		AlreadyInstalled: true}, true, nil
}

// extractor extracts a package into dir, keeping the manifest in memory and hashing the module.
// With dir "" it only reads the package (Inspect), with the same checks and limits: it keeps
// component.wasm in memory too and writes nothing.
type extractor struct {
	pkg  string // the package file, for messages
	dir  string
	wasm []byte // component.wasm, when dir is ""

	files, dirs map[string]bool // names extracted so far; dirs include the implied parents
	manifest    []byte          // nil when there is no manifest.json
	wasmDigest  string          // "" when there is no component.wasm
}

func (x *extractor) refuse(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...),
		Hint: "The package is damaged or was not made by fuscia component pack; get it again, or pack the component again."}
}

// readError marks an error of reading the package file, as opposed to a malformed package.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

type fileReader struct{ r io.Reader }

func (f fileReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{err}
	}
	return n, err
}

// limitReader reads at most n bytes, and fails with errTooLarge if there are more.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// archiveError turns an error of reading the archive into an I/O error or a refusal.
func (x *extractor) archiveError(err error) error {
	var re *readError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("read %s: %w", x.pkg, re.err)
	case errors.Is(err, errTooLarge):
		return x.refuse("%s is more than %s uncompressed, the limit of a package", x.pkg, sizeText(packageLimit))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return x.refuse("%s is truncated", x.pkg)
	}
	return x.refuse("%s is not a valid package (a gzip'd tar): %v", x.pkg, err)
}

func (x *extractor) extract(r io.Reader) error {
	zr, err := gzip.NewReader(fileReader{r})
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return x.archiveError(err)
		}
		return x.refuse("%s is not a valid package (a gzip'd tar): it does not start with a gzip header", x.pkg)
	}
	tr := tar.NewReader(&limitReader{r: zr, n: packageLimit})
	for count := 0; ; count++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return x.archiveError(err)
		}
		if count >= maxEntries {
			return x.refuse("%s has more than %d entries, the limit of a package", x.pkg, maxEntries)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader { // metadata for the archive, not a file
			continue
		}
		name, root, reason := entryName(hdr.Name)
		if reason != "" {
			return x.refuse("%s holds the entry %q, whose name %s", x.pkg, hdr.Name, reason)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if root {
				continue
			}
			if !allowedDir(name) {
				return x.refuse("%s holds the directory %q; a package holds only manifest.json, component.wasm, README.md and assets/", x.pkg, name)
			}
			if err := x.claim(name, true); err != nil {
				return err
			}
			if x.dir == "" {
				continue
			}
			if err := os.MkdirAll(filepath.Join(x.dir, filepath.FromSlash(name)), 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if root || !allowedFile(name) {
				return x.refuse("%s holds %q; a package holds only manifest.json, component.wasm, README.md and assets/", x.pkg, hdr.Name)
			}
			if err := x.claim(name, false); err != nil {
				return err
			}
			if err := x.file(name, hdr, tr); err != nil {
				return err
			}
		case tar.TypeSymlink, tar.TypeLink:
			return x.refuse("%s holds a link, %s -> %s; a package holds regular files only", x.pkg, hdr.Name, hdr.Linkname)
		default:
			return x.refuse("%s holds %q, which is not a regular file (tar type %q); a package holds regular files only", x.pkg, hdr.Name, string(hdr.Typeflag))
		}
	}
}

// claim records name as a file or a directory, refusing a name given twice or a file where a
// directory is (or the other way round).
func (x *extractor) claim(name string, dir bool) error {
	if x.files[name] || (!dir && x.dirs[name]) {
		return x.refuse("%s holds %q twice", x.pkg, name)
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.files[p] {
			return x.refuse("%s holds %q both as a file and as a directory", x.pkg, p)
		}
		x.dirs[p] = true
	}
	if dir {
		x.dirs[name] = true
	} else {
		x.files[name] = true
	}
	return nil
}

// file extracts one regular file.
func (x *extractor) file(name string, hdr *tar.Header, r io.Reader) error {
	if name == ManifestFile {
		if hdr.Size > MaxManifestSize {
			return x.refuse("%s: %s is %d bytes, more than the limit of %s", x.pkg, ManifestFile, hdr.Size, sizeText(MaxManifestSize))
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return x.archiveError(err)
		}
		x.manifest = b
		return nil // written by check, once it is valid
	}
	if x.dir == "" { // reading only
		if name != WasmFile {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return x.archiveError(err)
			}
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return x.archiveError(err)
		}
		x.wasm, x.wasmDigest = b, sha256Digest(b)
		return nil
	}
	dst := filepath.Join(x.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) { // two names the file system does not tell apart
		return x.refuse("%s holds %q twice (the file system ignores case)", x.pkg, name)
	}
	if err != nil {
		return err
	}
	var h hash.Hash
	w := io.Writer(out)
	if name == WasmFile {
		h = sha256.New()
		w = io.MultiWriter(out, h)
	}
	if _, err := io.Copy(w, r); err != nil {
		out.Close()
		if isWriteError(err, dst) {
			return err
		}
		return x.archiveError(err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if h != nil {
		x.wasmDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return nil
}

// isWriteError reports whether err came from writing the file dst.
func isWriteError(err error, dst string) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == dst
}

// check checks what was extracted: both files are there, the manifest is valid, its digest is
// that of component.wasm, and component.wasm is what the manifest's abi says. It writes
// manifest.json and returns the manifest.
func (x *extractor) check() (*Manifest, error) {
	if err := x.complete(); err != nil {
		return nil, err
	}
	wasm, err := os.ReadFile(filepath.Join(x.dir, WasmFile))
	if err != nil {
		return nil, err
	}
	m, pc := checkPackage(x.manifest, x.wasmDigest, wasm)
	if len(pc.reasons) > 0 {
		return nil, &RefusedError{Reason: strings.Join(pc.reasons, "\n"), Hint: pc.hint, Err: pc.merr}
	}
	if err := writeFileSync(filepath.Join(x.dir, ManifestFile), x.manifest); err != nil {
		return nil, err
	}
	return m, nil
}

// complete refuses a package without manifest.json or component.wasm.
func (x *extractor) complete() error {
	var missing []string
	if x.manifest == nil {
		missing = append(missing, ManifestFile)
	}
	if x.wasmDigest == "" {
		missing = append(missing, WasmFile)
	}
	if len(missing) > 0 {
		return &RefusedError{Reason: fmt.Sprintf("%s has no %s", x.pkg, strings.Join(missing, " and no ")),
			Hint: "A package holds manifest.json and component.wasm; make it with fuscia component pack."}
	}
	return nil
}

// packageCheck is what install finds wrong with a package's contents.
type packageCheck struct {
	reasons []string // each may span several lines
	hint    string   // what to do, when there are reasons
	merr    error    // the manifest's *ManifestError, or nil
}

// checkPackage checks a package's manifest, that its digest is wasmDigest, and wasm against
// its abi, as install does; the Manifest is nil when the manifest is not a JSON object.
func checkPackage(manifest []byte, wasmDigest string, wasm []byte) (*Manifest, packageCheck) {
	m, p := decodeManifest(manifest)
	if m != nil {
		m.check(p)
	}
	pc := packageCheck{merr: p.err(), hint: "Fix manifest.json and pack the component again with fuscia component pack."}
	if pc.merr != nil {
		pc.reasons = append(pc.reasons, pc.merr.Error())
	}
	if m != nil && digestRE().MatchString(m.Digest) && m.Digest != wasmDigest {
		pc.reasons = append(pc.reasons, fmt.Sprintf("digest mismatch: manifest says %s, component.wasm is %s", m.Digest, wasmDigest))
		if pc.merr == nil {
			pc.hint = "The package was changed after it was packed, or is damaged; get it again, or pack the component again with fuscia component pack."
		}
	}
	abi := 0
	if m != nil && !p.bad["abi"] {
		abi = m.ABI
	}
	if werr, whint := checkBinary(abi, wasm); werr != nil {
		pc.reasons = append(pc.reasons, werr.Error())
		if len(pc.reasons) == 1 {
			pc.hint = whint
		}
	}
	return m, pc
}

func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
