package fsctest

import (
	"strings"
	"testing"
)

// TestSecretNotInFailure: a failed assertion on the input of a task that used a secret does not
// print the secret (docs/testing.md: a test cannot leak a secret into a CI log).
func TestSecretNotInFailure(t *testing.T) {
	const secret = "s3cr3t-review-value"
	t.Setenv("FSCTEST_REVIEW_TOKEN", secret)
	dir := write(t, map[string]string{
		"send.fsc.hcl": `
workflow "send" {}

secret "token" {
  env = "FSCTEST_REVIEW_TOKEN"
}

task "send" {
  uses   = builtin.http
  inputs = {
    url     = "https://api.example.com/send"
    method  = "POST"
    headers = { authorization = "Bearer ${secret.token}" }
  }
}
`,
		"send.fsctest.hcl": `
mock_http {
  url = "https://api.example.com/send"
}
run "leaks" {
  assert {
    condition     = node.task.send.input.headers.authorization == "Bearer other"
    error_message = "sent ${node.task.send.input.headers.authorization}"
  }
}
`})
	_, got := runTest(t, Options{Paths: []string{dir}})
	r := got["leaks"]
	if r == nil || r.Status != Fail || len(r.Failures) != 1 {
		t.Fatalf("want one failure; got %s", describe(r))
	}
	if text := describe(r); strings.Contains(text, secret) {
		t.Errorf("the failure shows the secret:\n%s", text)
	}
}

// TestSecretNotInUnmockedRequest: the error of a request nothing mocks does not quote a secret
// its URL carries.
func TestSecretNotInUnmockedRequest(t *testing.T) {
	const secret = "s3cr3t-review-value"
	t.Setenv("FSCTEST_REVIEW_TOKEN", secret)
	dir := write(t, map[string]string{
		"send.fsc.hcl": `
workflow "send" {}

secret "token" {
  env = "FSCTEST_REVIEW_TOKEN"
}

task "send" {
  uses   = builtin.http
  inputs = { url = "https://api.example.com/send?key=${secret.token}" }
}
`,
		"send.fsctest.hcl": `
run "unmocked" {}
`})
	_, got := runTest(t, Options{Paths: []string{dir}})
	r := got["unmocked"]
	if r == nil || r.Status != Error || len(r.Diags) != 1 {
		t.Fatalf("want one error; got %s", describe(r))
	}
	if text := describe(r); strings.Contains(text, secret) || !strings.Contains(text, "https://api.example.com/send") {
		t.Errorf("the error shows the secret, or not the URL:\n%s", text)
	}
}
