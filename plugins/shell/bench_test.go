package main

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkRunTrue is the plugin's own cost of one exec of /bin/true (checks, pipes, process
// group, reaping), without the engine or gRPC; BenchmarkExecTrue is a bare os/exec Run of the
// same program for comparison, measured in the same `go test` run.
func BenchmarkRunTrue(b *testing.B) {
	for range b.N {
		if _, err := run(context.Background(), Input{Command: "/bin/true"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecTrue(b *testing.B) {
	for range b.N {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
