package rmweb

import "testing"

// Capacity vectors print their figures as Java's Float.toString does.
func TestJavaFloat(t *testing.T) {
	for v, want := range map[float64]string{3: "3.0", 37.5: "37.5", 100: "100.0", 1.0 / 3: "0.33333334", 1e7: "1.0E7", 1e-4: "1.0E-4", 10240: "10240.0", 0: "0.0"} {
		if got := javaFloat(v); got != want {
			t.Errorf("javaFloat(%v) = %s, want %s", v, got, want)
		}
	}
}
