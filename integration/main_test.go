package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain removes the bobbin binary bobbinBinary built once the package's tests are done
// (each run built one into a directory of its own under $TMPDIR). Run with
// BOBBIN_TEST_SQUATTER set, the test binary is the squatter of keeperSquatterTest.
func TestMain(m *testing.M) {
	if paths := os.Getenv(squatterEnv); paths != "" {
		os.Exit(squat(strings.Split(paths, ",")))
	}
	code := m.Run()
	removeCurrentHadoopHomes()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
