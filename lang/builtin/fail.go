package builtin

import "github.com/fuscia/fuscia/internal/outcome"

type failInput struct {
	Message string `json:"message"`
	Kind    string `json:"kind"`
}

// fail always fails, with the input's message and kind.
func fail(req Request) outcome.Result {
	var in failInput
	if bad := decodeInput("fail", req.Input, &in); bad != nil {
		return *bad
	}
	kind := outcome.Kind(in.Kind)
	switch kind {
	case "":
		kind = outcome.Fatal // the schema's default
	case outcome.Fatal, outcome.Retryable:
	default:
		return outcome.Fail(outcome.Validation, "builtin.fail: kind must be fatal or retryable; got %q", in.Kind)
	}
	msg := in.Message
	if msg == "" {
		// An empty message would leave the user with an error that says nothing.
		msg = "builtin.fail (no message given)"
	}
	return outcome.Fail(kind, "%s", msg)
}
