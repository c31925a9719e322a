package cluster

import (
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/fuscia/fuscia/lang"
)

func TestInputSecrets(t *testing.T) {
	in := []byte(`{"url":"https://x","auth":{"user":"u","token":"s3cret"},"list":["a","b~c"],"n":1}`)
	got := inputSecrets(in, []string{"/auth/token", "/list/1", "/missing", "/n"})
	slices.Sort(got)
	if want := []string{"b~c", "s3cret"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	whole := inputSecrets(in, []string{"/auth"})
	slices.Sort(whole)
	if want := []string{"s3cret", "u"}; !slices.Equal(whole, want) {
		t.Errorf("a pointer to an object: %q, want %q", whole, want)
	}
	if inputSecrets(in, nil) != nil || inputSecrets([]byte("not json"), []string{""}) != nil {
		t.Error("no pointers or no JSON give no secrets")
	}
}

func TestConfigSecrets(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{
		"endpoint": cty.StringVal("https://api"),
		"key":      cty.StringVal("k3y").Mark(lang.Sensitive),
		"nested":   cty.ObjectVal(map[string]cty.Value{"pw": cty.StringVal("pw1")}).Mark(lang.Sensitive),
	})
	got := configSecrets(v)
	slices.Sort(got)
	if want := []string{"k3y", "pw1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if configSecrets(cty.StringVal("plain")) != nil {
		t.Error("an unmarked config has no secrets")
	}
}
