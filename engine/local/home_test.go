package local

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestPrepareHome(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix modes on Windows")
	}
	for _, tc := range []struct {
		name          string
		setup         func(t *testing.T, base string) string // returns the home to prepare
		wantTightened fs.FileMode
		wantErr       string
	}{
		{"missing, with missing parents", func(t *testing.T, base string) string {
			return filepath.Join(base, "a", "b", "home")
		}, 0, ""},
		{"existing and private", func(t *testing.T, base string) string {
			return mkdirMode(t, filepath.Join(base, "home"), 0o700)
		}, 0, ""},
		{"existing, readable by all", func(t *testing.T, base string) string {
			return mkdirMode(t, filepath.Join(base, "home"), 0o755)
		}, 0o755, ""},
		{"existing, writable by all", func(t *testing.T, base string) string {
			return mkdirMode(t, filepath.Join(base, "home"), 0o777)
		}, 0o777, ""},
		{"existing, not writable by the user", func(t *testing.T, base string) string {
			return mkdirMode(t, filepath.Join(base, "home"), 0o500)
		}, 0o500, ""},
		{"a file", func(t *testing.T, base string) string {
			p := filepath.Join(base, "home")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, 0, "is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := tc.setup(t, t.TempDir())
			got, err := PrepareHome(home)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), home) {
					t.Fatalf("PrepareHome = %v, want an error naming %s and saying %q", err, home, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.wantTightened {
				t.Errorf("PrepareHome reported the mode it tightened as %04o, want %04o", got, tc.wantTightened)
			}
			if m := modeOf(t, home); m != HomeMode {
				t.Errorf("home mode %04o, want %04o", m, HomeMode)
			}
		})
	}
}

func mkdirMode(t *testing.T, dir string, mode fs.FileMode) string {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return dir
}

// TestOwnerFilesPrivate: Own makes an open home private before it listens, the socket 0600, and
// the owner file 0600 (even over a stale one of a wider mode) naming the command without the
// values of its flags.
func TestOwnerFilesPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix modes on Windows")
	}
	home := shortHome(t)
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(home, OwnerFileName)
	if err := os.WriteFile(stale, []byte("2147483000 fuscia apply -var secret=hunter2 x.fsc.hcl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(stale, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := Own(ctx, OwnerConfig{Home: home, Command: "fuscia apply x.fsc.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := o.Close(); err != nil {
			t.Error(err)
		}
	}()
	if m := modeOf(t, home); m != HomeMode {
		t.Errorf("home mode %04o, want %04o", m, HomeMode)
	}
	if m := modeOf(t, filepath.Join(home, SocketName)); m != 0o600 {
		t.Errorf("socket mode %04o, want 0600", m)
	}
	if m := modeOf(t, stale); m != 0o600 {
		t.Errorf("owner file mode %04o, want 0600", m)
	}
	b, err := os.ReadFile(stale)
	if err != nil {
		t.Fatal(err)
	}
	if want := ownerLine("fuscia apply x.fsc.hcl"); string(b) != want || !strings.HasSuffix(want, " fuscia apply x.fsc.hcl\n") {
		t.Errorf("owner file = %q, want %q", b, want)
	}
	if got := lockedBy(home); !strings.HasSuffix(got, "(fuscia apply x.fsc.hcl)") {
		t.Errorf("lockedBy = %q", got)
	}
	// No temporary file of the owner file's is left behind.
	ents, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestOwnerLine(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"fuscia serve flows", " fuscia serve flows\n"},
		{"fuscia apply odd\nname.fsc.hcl", " fuscia apply odd name.fsc.hcl\n"},
		{"", " " + filepath.Base(os.Args[0]) + "\n"},
	} {
		if got := ownerLine(tc.command); !strings.HasSuffix(got, tc.want) || !strings.HasPrefix(got, strconv.Itoa(os.Getpid())+" ") {
			t.Errorf("ownerLine(%q) = %q, want PID%q", tc.command, got, tc.want)
		}
	}
}
