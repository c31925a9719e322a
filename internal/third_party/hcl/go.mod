module github.com/hashicorp/hcl/v2

go 1.25.0

require (
	github.com/agext/levenshtein v1.2.1
	github.com/apparentlymart/go-textseg/v15 v15.0.0
	github.com/apparentlymart/go-textseg/v17 v17.0.1
	github.com/davecgh/go-spew v1.1.1
	github.com/go-test/deep v1.0.3
	github.com/google/go-cmp v0.6.0
	github.com/mitchellh/go-wordwrap v1.0.1
	github.com/spf13/pflag v1.0.2
	github.com/zclconf/go-cty v1.19.0
	github.com/zclconf/go-cty-debug v0.0.0-20240509010212-0d6042c53940
	golang.org/x/term v0.37.0
	golang.org/x/tools v0.38.0
)

require (
	golang.org/x/mod v0.29.0 // indirect
	golang.org/x/sync v0.18.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	golang.org/x/text v0.31.0 // indirect
)
