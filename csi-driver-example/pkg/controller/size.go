package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// quantity writes a number of bytes as a person reads a claim's size, with
// the exact count beside it: 1Gi (1073741824 bytes). A message that names a
// limit this way says what to ask for in the claim.
func quantity(bytes int64) string {
	return fmt.Sprintf("%s (%d bytes)", resource.NewQuantity(bytes, resource.BinarySI), bytes)
}
