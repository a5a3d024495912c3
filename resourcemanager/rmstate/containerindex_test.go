package rmstate

import (
	"testing"

	"github.com/bobbin-yarn/bobbin/records"
)

// The filter never misses an id it holds, and at fifty ids (a busy node's starting
// containers) lets few others through, for sequential ids of one attempt as for ids of
// many applications.
func TestIDFilter(t *testing.T) {
	id := func(app, seq int) records.ContainerID {
		return records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1700000000000, ID: int32(app)}, Attempt: 1}, ID: int64(seq)}
	}
	for _, apps := range []int{1, 200} {
		var f idFilter
		held := map[records.ContainerID]bool{}
		for i := range 50 {
			c := id(i%apps, 1000+i)
			f.add(c)
			held[c] = true
		}
		passed, tried := 0, 0
		for app := range apps {
			for seq := range 3000 {
				c := id(app, seq)
				switch {
				case held[c] && !f.has(c):
					t.Fatalf("%v added and not found", c)
				case !held[c]:
					tried++
					if f.has(c) {
						passed++
					}
				}
			}
		}
		if rate := float64(passed) / float64(tried); rate > 0.08 {
			t.Errorf("%d applications: %.3f of the ids not added pass, want about 0.05", apps, rate)
		}
	}
}
