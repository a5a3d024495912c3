package main

import (
	"os"
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

// The RM's heap floor is automatic by default (it follows the running NodeManagers), a
// size in MB, or none; a wrong value is refused by name.
func TestReadGCTarget(t *testing.T) {
	const pct, floor = "bobbin.resourcemanager.gc-percent", "bobbin.resourcemanager.gc-heap-floor-mb"
	read := func(kv ...string) (gcTarget, error) {
		c := conf.New()
		for i := 0; i < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1])
		}
		return readGCTarget(c, pct, floor)
	}
	// GOGC in the environment overrides both keys; the test needs it unset.
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	if g, err := read(); err != nil || !g.auto || g.percent != 100 || g.floorMB != 0 {
		t.Errorf("defaults: %+v, %v; want an automatic floor at GOGC 100", g, err)
	}
	if g, err := read(floor, "AUTO", pct, "200"); err != nil || !g.auto || g.percent != 200 {
		t.Errorf("auto: %+v, %v", g, err)
	}
	if g, err := read(floor, "128"); err != nil || g.auto || g.floorMB != 128 {
		t.Errorf("128 MB: %+v, %v", g, err)
	}
	if g, err := read(floor, "0"); err != nil || g.auto || g.floorMB != 0 {
		t.Errorf("no floor: %+v, %v", g, err)
	}
	for _, kv := range [][]string{{floor, "-1"}, {floor, "lots"}, {pct, "0"}} {
		if _, err := read(kv...); err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%v: %v, want an error naming %s", kv, err, kv[0])
		}
	}
}

// GOGC in the environment overrides the keys, wrong values included.
func TestReadGCTargetGOGCOverrides(t *testing.T) {
	t.Setenv("GOGC", "150")
	c := conf.New()
	c.Set("bobbin.resourcemanager.gc-heap-floor-mb", "lots")
	if g, err := readGCTarget(c, "bobbin.resourcemanager.gc-percent", "bobbin.resourcemanager.gc-heap-floor-mb"); err != nil || !g.fromEnv {
		t.Errorf("with GOGC set: %+v, %v", g, err)
	}
}
