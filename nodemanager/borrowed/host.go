package borrowed

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Host is one reading of the whole machine, from /proc and statfs.
type Host struct {
	Cores int
	// CPUBusy and CPUTotal are cumulative over all cores since boot (/proc/stat): busy
	// is everything but idle and iowait.
	CPUBusy, CPUTotal time.Duration
	MemTotal          int64 // bytes
	MemAvailable      int64 // bytes
	DiskFreeMB        int64 // the least free space among the NodeManager's dirs
}

// ReadHost reads the machine's CPU counters, memory and the free space of dirs.
func ReadHost(procRoot string, dirs []string) (Host, error) {
	var h Host
	stat, err := os.ReadFile(procRoot + "/stat")
	if err != nil {
		return h, fmt.Errorf("borrowed: %w", err)
	}
	if h.CPUBusy, h.CPUTotal, h.Cores, err = parseStat(stat); err != nil {
		return h, err
	}
	mem, err := os.ReadFile(procRoot + "/meminfo")
	if err != nil {
		return h, fmt.Errorf("borrowed: %w", err)
	}
	if h.MemTotal, h.MemAvailable, err = parseMeminfo(mem); err != nil {
		return h, err
	}
	h.DiskFreeMB = -1
	for _, d := range dirs {
		var fs syscall.Statfs_t
		if err := syscall.Statfs(d, &fs); err != nil {
			continue
		}
		free := int64(fs.Bavail) * fs.Bsize >> 20
		if h.DiskFreeMB < 0 || free < h.DiskFreeMB {
			h.DiskFreeMB = free
		}
	}
	return h, nil
}

// parseStat reads the aggregate "cpu" line of /proc/stat (USER_HZ ticks) and counts the
// per-core lines.
func parseStat(b []byte) (busy, total time.Duration, cores int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			cores++
			continue
		}
		if len(f) < 5 {
			return 0, 0, 0, fmt.Errorf("borrowed: short cpu line in /proc/stat: %q", sc.Text())
		}
		var sum, idle int64
		// user nice system idle iowait irq softirq steal (guest and guest_nice are
		// already counted in user and nice).
		for i := 1; i < len(f) && i <= 8; i++ {
			v, perr := strconv.ParseInt(f[i], 10, 64)
			if perr != nil {
				return 0, 0, 0, fmt.Errorf("borrowed: /proc/stat cpu field %d: %w", i, perr)
			}
			sum += v
			if i == 4 || i == 5 {
				idle += v
			}
		}
		tick := time.Second / 100
		busy, total, found = time.Duration(sum-idle)*tick, time.Duration(sum)*tick, true
	}
	if !found {
		return 0, 0, 0, fmt.Errorf("borrowed: no cpu line in /proc/stat")
	}
	if cores == 0 {
		cores = 1
	}
	return busy, total, cores, nil
}

func parseMeminfo(b []byte) (total, avail int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var haveT, haveA bool
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, perr := strconv.ParseInt(f[1], 10, 64)
		if perr != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total, haveT = v<<10, true
		case "MemAvailable:":
			avail, haveA = v<<10, true
		}
	}
	if !haveT || !haveA {
		return 0, 0, fmt.Errorf("borrowed: /proc/meminfo lacks MemTotal or MemAvailable")
	}
	return total, avail, nil
}
