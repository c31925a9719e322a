// Copyright IBM Corp. 2014, 2025
// SPDX-License-Identifier: MPL-2.0

//go:build tools

package hcl

import (
	_ "golang.org/x/tools/cmd/stringer"
)
