//go:build !unix

package checkpoint

import "time"

// childrenCPU is not measured here.
func childrenCPU() time.Duration { return -1 }
