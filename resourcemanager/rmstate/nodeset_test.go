package rmstate

import (
	"fmt"
	"slices"
	"testing"
)

func TestNodeIndexAndSet(t *testing.T) {
	var x nodeIndex
	var s nodeSet
	var want []string
	for i := 0; i < 300; i += 7 {
		n := fmt.Sprintf("host%d:8041", i)
		if !s.add(x.of(n)) {
			t.Fatalf("%s reported present before it was added", n)
		}
		if s.add(x.of(n)) {
			t.Fatalf("%s added twice", n)
		}
		want = append(want, n)
	}
	if x.of("host0:8041") != 0 || x.of("host7:8041") != 1 {
		t.Fatal("indexes are not stable")
	}
	var got []string
	s.each(func(i int) { got = append(got, x.keys[i]) })
	if !slices.Equal(got, want) {
		t.Fatalf("each gave %v, want %v", got, want)
	}
	var empty nodeSet
	empty.each(func(int) { t.Fatal("empty set has members") })
}
