package registry

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use rather than at package initialization, which every
// fuscia command pays at start-up, `fuscia version` included, whether or not it reads a
// component (docs/performance.md, "Start-up and one-shot apply").
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
