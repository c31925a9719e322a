// Copyright 2026 The Fuscia Authors
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package procfs

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled the first time it is used. Fuscia: upstream
// compiles the package's ~20 expressions with regexp.MustCompile in package variables, so
// every start of a program linking procfs (Fuscia's, through the Prometheus process collector
// of `serve`'s /metrics) compiled all of them, ~0.45 ms and ~900 allocations, though most
// programs read none of the files they parse. A lazyRegexp is a composite literal, which the
// linker lays out statically: declaring one runs no code at all. Its methods are the
// *regexp.Regexp ones the package calls, so the call sites are upstream's.
type lazyRegexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// get returns the compiled expression, compiling it on the first call. Like the
// regexp.MustCompile it replaces, it panics if the expression does not compile (the
// expressions are constants; TestLazyRegexpsCompile compiles every one).
func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *lazyRegexp) MatchString(s string) bool { return l.get().MatchString(s) }

func (l *lazyRegexp) FindString(s string) string { return l.get().FindString(s) }

func (l *lazyRegexp) FindStringSubmatch(s string) []string { return l.get().FindStringSubmatch(s) }

func (l *lazyRegexp) ReplaceAllString(src, repl string) string {
	return l.get().ReplaceAllString(src, repl)
}
