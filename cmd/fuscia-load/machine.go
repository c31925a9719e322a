package main

import (
	"debug/buildinfo"
	"os"
	"runtime"
	"strings"
)

// machine is what the figures were measured on: the CPUs, the Go versions and the file
// system of serve's home (strict durability syncs to it).
type machine struct {
	CPUs            int    `json:"cpus"`
	GOMAXPROCS      int    `json:"gomaxprocs"`
	GoVersion       string `json:"go_version"`        // fuscia-load's
	FusciaGoVersion string `json:"fuscia_go_version"` // the fuscia binary's, or "unknown"
	FusciaBinary    string `json:"fuscia_binary"`
	Home            string `json:"home"`
	HomeFS          string `json:"home_fs"`    // or "unknown"
	HomeMount       string `json:"home_mount"` // or "unknown"
}

// describeMachine describes this machine, the fuscia binary bin and the home directory.
func describeMachine(bin, home string) machine {
	m := machine{
		CPUs:            runtime.NumCPU(),
		GOMAXPROCS:      runtime.GOMAXPROCS(0),
		GoVersion:       runtime.Version(),
		FusciaGoVersion: "unknown",
		FusciaBinary:    bin,
		Home:            home,
		HomeFS:          "unknown",
		HomeMount:       "unknown",
	}
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		m.FusciaGoVersion = bi.GoVersion
	}
	if b, err := os.ReadFile("/proc/self/mounts"); err == nil {
		m.HomeFS, m.HomeMount = homeMount(string(b), home, m.HomeFS, m.HomeMount)
	}
	return m
}

// homeMount finds the mount of path in mounts (the text of /proc/self/mounts): its file
// system type and mount point, the longest that contains path; fs and mount when none does.
func homeMount(mounts, path, fs, mount string) (string, string) {
	best := -1
	for _, line := range strings.Split(mounts, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		mp := strings.ReplaceAll(f[1], `\040`, " ")
		if (path == mp || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= best {
			best = len(mp)
			fs, mount = f[2], mp
		}
	}
	return fs, mount
}
