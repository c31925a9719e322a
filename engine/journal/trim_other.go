//go:build !linux

package journal

import "errors"

var errNoTrim = errors.New("paging out the store's mappings is implemented on Linux only")

// pageOut does nothing where MADV_PAGEOUT does not exist.
func pageOut(start, n uintptr) error { return errNoTrim }

// readSelfMaps fails where /proc/self/maps does not exist: nothing is trimmed.
func readSelfMaps() ([]byte, error) { return nil, errNoTrim }
