package execcore

import "github.com/fuscia/fuscia/plugin/sdk"

// SDKError maps the core's error kinds onto the SDK's; the output goes along as partial output
// so that a failed node keeps what the command wrote.
func SDKError(err error, out Output) error {
	switch KindOf(err) {
	case Invalid:
		return sdk.Validation("%s", err)
	case Fatal:
		err = sdk.Fatal("%s", err)
	}
	return sdk.WithPartialOutput(err, out) // nil stays nil; a plain error is retryable
}

// Diagnostics turns the core's input problems into plan-time diagnostics.
func Diagnostics(ps []Problem) []sdk.Diagnostic {
	ds := make([]sdk.Diagnostic, len(ps))
	for i, p := range ps {
		ds[i] = sdk.Diagnostic{Summary: p.Summary, Detail: p.Detail, Path: p.Path}
	}
	return ds
}
