package container

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// guestPageSize is the UML guest's page size: UML maps each guest page into the host
// process that runs a guest process separately, and the kernel's own advice is
// vm.max_map_count >= guest memory / 4096.
const guestPageSize = 4096

// guestPages is how many host mappings a guest of memMB may need.
func guestPages(memMB int64) int64 { return memMB << 20 / guestPageSize }

// MapCountMB is the guest memory, in MB, that a vm.max_map_count of maps covers.
func MapCountMB(maps int64) int64 { return maps * guestPageSize >> 20 }

// hostMaxMapCount reads the host's vm.max_map_count.
func hostMaxMapCount() (int64, error) {
	b, err := os.ReadFile("/proc/sys/vm/max_map_count")
	if err != nil {
		return 0, fmt.Errorf("uml executor: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("uml executor: /proc/sys/vm/max_map_count: %w", err)
	}
	return n, nil
}

// MapCountShortfall says whether the host's vm.max_map_count is too low for the guest
// of a container of containerMB: once the host refuses a mapping, UML kills the guest
// process that faulted (SIGKILL, exit 137) though the guest had memory left, which looks
// like a crash of the job. need is the value to set.
func (e *UMLExecutor) MapCountShortfall(containerMB int64) (have, need int64, short bool, err error) {
	have, err = hostMaxMapCount()
	if err != nil {
		return 0, 0, false, err
	}
	need = guestPages(e.guestMem(Spec{MemoryMB: containerMB}))
	return have, need, have < need, nil
}
