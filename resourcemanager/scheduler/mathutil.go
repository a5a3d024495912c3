package scheduler

import "math/bits"

func mulFull(x, y uint64) (hi, lo uint64) { return bits.Mul64(x, y) }

func addc(x, y uint64) (sum, carry uint64) { return bits.Add64(x, y, 0) }
