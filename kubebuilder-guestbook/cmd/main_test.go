/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import "testing"

// ENABLE_WEBHOOKS=false must really turn the webhooks off (it is the default of
// --enable-webhooks); anything that is not a boolean keeps them on.
func TestEnableWebhooksEnvSetsTheFlagDefault(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"false", false},
		{"0", false},
		{"true", true},
		{"", true},
		{"no", true},
	}
	for _, tt := range tests {
		t.Run("ENABLE_WEBHOOKS="+tt.value, func(t *testing.T) {
			t.Setenv("ENABLE_WEBHOOKS", tt.value)
			if got := envBool("ENABLE_WEBHOOKS", true); got != tt.want {
				t.Errorf("envBool = %v; want %v", got, tt.want)
			}
		})
	}
}
