package guest

// Config returns the value of key in the workflow's component block's config map, and whether
// it is set. A string is returned as is; any other value (a number, a list, an object) as its
// JSON encoding.
func Config(key string) (string, bool) {
	b, ok := hostConfigGet(key)
	return string(b), ok
}
