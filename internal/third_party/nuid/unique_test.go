// Copyright 2016-2018 The NATS Authors
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//go:build !race
// +build !race

package nuid

import (
	"testing"
)

func TestBasicUniqueness(t *testing.T) {
	// Fuscia: upstream draws 10,000,000 (a map of ~1 GB); 1,000,000 keeps the test cheap
	// on a shared 2-core machine and still crosses many sequence increments.
	n := 1000000
	m := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		n := Next()
		if _, ok := m[n]; ok {
			t.Fatalf("Duplicate NUID found: %v\n", n)
		}
		m[n] = struct{}{}
	}
}
