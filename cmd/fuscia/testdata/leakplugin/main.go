// Command leakplugin is the "leak" plugin of the secrets end-to-end test (secrets_e2e_test.go):
// version 0.1.0, one task `spill` that repeats the value it is given, in every encoding an
// attacker would try, everywhere a plugin can write: a node log line, its stderr (a plain line
// and an hclog JSON line, which Fuscia bridges into its log), its output, and, with mode
// "fail" or "crash", an error message or the stderr tail Fuscia quotes when the process dies.
package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fuscia/fuscia/plugin/sdk"
)

type spillInput struct {
	S    string `json:"s"`
	Mode string `json:"mode,omitempty"` // "", "fail" or "crash"
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "leak", Version: "0.1.0", Tasks: []sdk.TaskDef{
		sdk.Task("spill", spill),
	}})
}

// forms is s in the encodings of the test, joined by spaces.
func forms(s string) string {
	b := []byte(s)
	return strings.Join([]string{
		s,
		base64.StdEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b),
		strings.ToUpper(hex.EncodeToString(b)),
		url.QueryEscape(s),
		"Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+s)),
	}, " ")
}

func spill(_ context.Context, call *sdk.Call, in spillInput) (map[string]string, error) {
	all := forms(in.S)
	call.Info("log line: %s", all)
	fmt.Fprintf(os.Stderr, "plain stderr: %s\n", all)
	msg, _ := json.Marshal("hclog stderr: " + all)
	fmt.Fprintf(os.Stderr, `{"@level":"warn","@message":%s,"@timestamp":%q}`+"\n", msg, time.Now().Format(time.RFC3339Nano))
	switch in.Mode {
	case "fail":
		return nil, sdk.Fatal("refused: %s", all)
	case "crash":
		fmt.Fprintf(os.Stderr, "dying with %s\n", all)
		os.Exit(3)
	}
	return map[string]string{"echo": all}, nil
}
