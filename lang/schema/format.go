package schema

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Reasons are written to follow "must be a valid duration, got "abc": ", and to follow the
// quoted value in the errors of ParseDuration and ParseSize.
const (
	durationForm = `a duration is a number with a unit (ns, us, ms, s, m, h), like "500ms", "30s" or "1h30m"`
	sizeForm     = `a size is a whole number of bytes, or a whole number with a unit: ` +
		`KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of 1000), like "512KiB", "10MiB" or "10MB"`
)

// ParseDuration parses a duration the way time.ParseDuration does ("500ms", "30s", "1h30m"),
// refusing negative durations. Its error says what a duration looks like, so it can be shown
// to users as it is.
func ParseDuration(s string) (time.Duration, error) {
	d, reason := parseDuration(s)
	if reason != "" {
		return 0, fmt.Errorf("invalid duration %q: %s", s, reason)
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, string) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, durationForm
	}
	if d < 0 {
		return 0, "a duration must not be negative"
	}
	return d, ""
}

// sizeUnit returns the multiplier of a unit ParseSize accepts. Units are case-sensitive
// because "mb" and "Mb" are read as megabits elsewhere; "KB" is accepted for kB because
// people write it.
func sizeUnit(u string) (int64, bool) {
	switch u {
	case "", "B":
		return 1, true
	case "kB", "KB":
		return 1e3, true
	case "MB":
		return 1e6, true
	case "GB":
		return 1e9, true
	case "TB":
		return 1e12, true
	case "KiB":
		return 1 << 10, true
	case "MiB":
		return 1 << 20, true
	case "GiB":
		return 1 << 30, true
	case "TiB":
		return 1 << 40, true
	}
	return 0, false
}

// ParseSize parses a byte size: a whole number of bytes ("1024", "100B"), or a whole number
// with a binary unit ("512KiB", "10MiB", "1GiB", "1TiB") or a decimal one ("10kB", "10MB",
// "1GB", "1TB"). A space may separate the number from the unit. Its error says which forms
// are accepted, so it can be shown to users as it is.
func ParseSize(s string) (int64, error) {
	n, reason := parseSize(s)
	if reason != "" {
		return 0, fmt.Errorf("invalid size %q: %s", s, reason)
	}
	return n, nil
}

func parseSize(s string) (int64, string) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		if strings.HasPrefix(t, "-") {
			return 0, "a size must not be negative"
		}
		return 0, sizeForm
	}
	mult, ok := sizeUnit(strings.TrimLeft(t[i:], " "))
	if !ok {
		return 0, sizeForm
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, "the size is too large"
	}
	return n * mult, ""
}

// checkHTTPURL returns why s is not an absolute http or https URL with a host, or "".
func checkHTTPURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "it does not parse as a URL"
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return `it has no scheme; start it with "https://" or "http://"`
	default:
		return fmt.Sprintf("the scheme is %q; only http and https are supported", u.Scheme)
	}
	if u.Host == "" {
		return "it has no host"
	}
	return ""
}

// formats returns the formats Compile registers. The validator calls them with any JSON
// value; like the standard formats they check strings only, leaving other types to "type".
func formats() []*jsonschema.Format {
	check := func(f func(string) string) func(any) error {
		return func(v any) error {
			s, ok := v.(string)
			if !ok {
				return nil
			}
			if reason := f(s); reason != "" {
				return errors.New(reason)
			}
			return nil
		}
	}
	return []*jsonschema.Format{
		{Name: "duration", Validate: check(func(s string) string { _, r := parseDuration(s); return r })},
		{Name: "size", Validate: check(func(s string) string { _, r := parseSize(s); return r })},
		{Name: "http-url", Validate: check(checkHTTPURL)},
	}
}

// formatNoun names what a format asks for, for "must be a valid ...".
func formatNoun(format string) string {
	switch format {
	case "http-url":
		return "http or https URL"
	default:
		return format
	}
}

// FormatSize writes a byte count the way ParseSize reads it and users write sizes: "64 MiB",
// "16 KiB", "100 bytes".
func FormatSize(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n > 0 && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
