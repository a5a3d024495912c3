package integration

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the bobbin binary bobbinBinary built once the package's tests are done
// (each run built one into a directory of its own under $TMPDIR).
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
