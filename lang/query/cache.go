package query

import "sync"

// cache holds a Doc's analyses, each computed on first use and shared by the copies of the
// Doc: the full one (the syntax tree, declarations and references) and the light one that
// completion reads (textscan.go).
type cache struct {
	once sync.Once
	a    *analysis

	lightOnce sync.Once
	light     *analysis
}

// lightAnalysis returns d's light analysis, from its cache when it has one.
func (d Doc) lightAnalysis() *analysis {
	if d.cache == nil {
		return newLightAnalysis(d.Filename, d.Src)
	}
	d.cache.lightOnce.Do(func() { d.cache.light = newLightAnalysis(d.Filename, d.Src) })
	return d.cache.light
}
