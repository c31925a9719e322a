package serve

import (
	"testing"

	"github.com/fuscia/fuscia/internal/testcert"
)

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and localhost and its key,
// as NAME.pem and NAME.key in dir, and returns their paths.
func writeSelfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	certFile, keyFile, _ = testcert.SelfSigned(t, dir, name)
	return certFile, keyFile
}
