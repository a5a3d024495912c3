// Package nmphase spreads NodeManager heartbeats over the heartbeat interval.
//
// A NodeManager waits the interval its last answer named after that answer arrives (the
// Java NM's NodeStatusUpdater does, and so does Bobbin's), so a node's next heartbeat
// lands one interval plus a round trip after its last. Nodes whose answers come out
// together, after an RM restart, a network hiccup or a garbage collection, stay together
// from then on, and groups that touch merge: left alone the heartbeats of thousands of
// nodes gather into a few bursts a second, and each burst waits behind itself. Measured
// with 10,000 simulated NMs at 1 s (docs/benchmarks.md), heartbeats that fell evenly
// after registration were, twenty seconds later, arriving in 10 ms windows holding
// anywhere from 1 to 250 of them, and the median heartbeat waited 43 ms.
//
// The RM breaks the bunches with the interval it names in each answer: every node has a
// place in the interval (a hash of its id, so no state is kept and every RM of an HA pair
// agrees), and each answer shortens or lengthens the next wait, by at most a set fraction
// of the interval, towards that place. A node out of place gets there within a few
// heartbeats; one in place gets the interval, less its round trip.
package nmphase

import "time"

// Spreader computes the nextHeartBeatInterval of each answer. Its zero value, and any
// with MaxShift zero, names Interval unchanged, as the Java RM does.
type Spreader struct {
	// Interval is yarn.resourcemanager.nodemanagers.heartbeat-interval-ms.
	Interval time.Duration
	// MaxShift bounds how far one answer moves a node's next heartbeat.
	MaxShift time.Duration
}

// New is a Spreader that moves a heartbeat by at most percent of the interval.
func New(interval time.Duration, percent int) Spreader {
	return Spreader{Interval: interval, MaxShift: interval * time.Duration(percent) / 100}
}

// Next is the interval to name in the answer to node's heartbeat that arrived at
// arrival, in milliseconds as the message carries it (never below 1).
func (s Spreader) Next(node string, arrival time.Time) int64 {
	iv := s.Interval
	if s.MaxShift <= 0 || iv <= 0 {
		return max(1, iv.Milliseconds())
	}
	shift := min(max(Offset(node, arrival, iv), -s.MaxShift), s.MaxShift)
	return max(1, (iv + shift).Milliseconds())
}

// Offset is how far node's place in the interval lies after a heartbeat that arrived
// at arrival, in [-interval/2, interval/2).
func Offset(node string, arrival time.Time, interval time.Duration) time.Duration {
	n := int64(interval)
	d := (Place(node, interval).Nanoseconds() - arrival.UnixNano()%n) % n
	if d < 0 {
		d += n
	}
	if d >= n/2 {
		d -= n
	}
	return time.Duration(d)
}

// Place is node's place in the interval: the offset from each whole multiple of the
// interval since the Unix epoch at which its heartbeats should arrive.
func Place(node string, interval time.Duration) time.Duration {
	// FNV-1a, then a finaliser (splitmix64's) so that ids differing only in their last
	// digits, as a rack's nodes do, still land far apart.
	h := uint64(14695981039346656037)
	for i := 0; i < len(node); i++ {
		h = (h ^ uint64(node[i])) * 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return time.Duration(h % uint64(interval))
}
