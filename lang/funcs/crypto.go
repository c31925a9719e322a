package funcs

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Terraform's hash functions hash the string's UTF-8 bytes and give the
// digest in lower-case hex, or in Base64 for the base64* variants.
var (
	md5Func          = makeHashFunc("MD5", md5.New, hexEncoding)
	sha1Func         = makeHashFunc("SHA-1", sha1.New, hexEncoding)
	sha256Func       = makeHashFunc("SHA-256", sha256.New, hexEncoding)
	sha512Func       = makeHashFunc("SHA-512", sha512.New, hexEncoding)
	base64Sha256Func = makeHashFunc("SHA-256", sha256.New, base64Encoding)
	base64Sha512Func = makeHashFunc("SHA-512", sha512.New, base64Encoding)
)

type digestEncoding struct {
	name   string
	encode func([]byte) string
}

var (
	hexEncoding    = digestEncoding{"hexadecimal", hex.EncodeToString}
	base64Encoding = digestEncoding{"Base64", base64.StdEncoding.EncodeToString}
)

func makeHashFunc(name string, newHash func() hash.Hash, enc digestEncoding) function.Function {
	return function.New(&function.Spec{
		Description: fmt.Sprintf("Returns the %s digest of the string's UTF-8 bytes, in %s.", name, enc.name),
		Params: []function.Parameter{
			{Name: "str", Type: cty.String},
		},
		Type:         function.StaticReturnType(cty.String),
		RefineResult: refineNotNull,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			h := newHash()
			h.Write([]byte(args[0].AsString()))
			return cty.StringVal(enc.encode(h.Sum(nil))), nil
		},
	})
}

// uuidV5Func is Terraform's uuidv5. Unlike uuid it is pure: the same
// namespace and name always give the same UUID.
var uuidV5Func = function.New(&function.Spec{
	Description: `Returns the name-based (version 5) UUID of name in namespace, which is "dns", "url", "oid", "x500" or a UUID.`,
	Params: []function.Parameter{
		{Name: "namespace", Type: cty.String},
		{Name: "name", Type: cty.String},
	},
	Type:         function.StaticReturnType(cty.String),
	RefineResult: refineNotNull,
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		ns, ok := uuidNamespaces[args[0].AsString()]
		if !ok {
			var err error
			if ns, err = parseUUID(args[0].AsString()); err != nil {
				return cty.NilVal, function.NewArgErrorf(0, "uuidv5() doesn't support namespace %q (%s)", args[0].AsString(), err)
			}
		}
		// RFC 9562 section 5.5: the SHA-1 of namespace and name, truncated,
		// with the version and variant bits set.
		h := sha1.New()
		h.Write(ns[:])
		h.Write([]byte(args[1].AsString()))
		var u [16]byte
		copy(u[:], h.Sum(nil))
		u[6] = u[6]&0x0f | 0x50
		u[8] = u[8]&0x3f | 0x80
		return cty.StringVal(formatUUID(u)), nil
	},
})

// uuidNamespaces are RFC 9562's predefined namespaces, by Terraform's names.
var uuidNamespaces = map[string][16]byte{
	"dns":  mustParseUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
	"url":  mustParseUUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8"),
	"oid":  mustParseUUID("6ba7b812-9dad-11d1-80b4-00c04fd430c8"),
	"x500": mustParseUUID("6ba7b814-9dad-11d1-80b4-00c04fd430c8"),
}

// parseUUID accepts the forms that Terraform's UUID parser does: the
// standard 36 characters, optionally with a "urn:uuid:" prefix or in braces,
// or 32 bare hex digits.
func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	switch {
	case len(s) == 36+9 && strings.EqualFold(s[:9], "urn:uuid:"):
		s = s[9:]
	case len(s) == 36+2 && s[0] == '{' && s[len(s)-1] == '}':
		s = s[1 : len(s)-1]
	case len(s) == 32:
		if _, err := hex.Decode(u[:], []byte(s)); err != nil {
			return u, fmt.Errorf("invalid UUID: %w", err)
		}
		return u, nil
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("invalid UUID format")
	}
	digits := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(u[:], []byte(digits)); err != nil {
		return u, fmt.Errorf("invalid UUID: %w", err)
	}
	return u, nil
}

func mustParseUUID(s string) [16]byte {
	u, err := parseUUID(s)
	if err != nil {
		panic(err)
	}
	return u
}

func formatUUID(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
