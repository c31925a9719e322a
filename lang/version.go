package lang

import (
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
)

// checkVersionConstraint checks a `version` constraint. Constraints use Terraform's syntax
// ("~> 1.2", ">= 1.0, < 2.0", "1.2.3"), parsed by hashicorp/go-version like Terraform does.
func checkVersionConstraint(s string, rng hcl.Range) *hcl.Diagnostic {
	if _, err := version.NewConstraint(s); err != nil {
		return errorf(rng, "Invalid version constraint",
			"%q is not a version constraint. Use forms such as \"1.2.3\", \"~> 1.2\" or \">= 1.0, < 2.0\".", s)
	}
	return nil
}
