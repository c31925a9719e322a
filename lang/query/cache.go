package query

// cache holds a Doc's analysis, computed on first use.
type cache struct{}
