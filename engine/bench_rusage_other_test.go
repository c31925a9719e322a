//go:build !unix

package engine

import "time"

// selfUsage is not measured here.
func selfUsage() (cpu time.Duration, switches int64) { return 0, 0 }
