package rmbench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// procSample is what a sampler saw of a process over its life.
type procSample struct {
	cpu       time.Duration // user+system CPU used while sampling
	peakRSSMB float64       // the larger of the sampled maximum and the kernel's VmHWM
	endRSSMB  float64
}

// procSampler polls a process's RSS, so a peak is seen even where VmHWM is not kept
// (some sandboxes), and its CPU time.
type procSampler struct {
	pid  int
	done chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	cpu0   time.Duration
	peakKB int64
	lastKB int64
}

func startSampler(pid int, every time.Duration) *procSampler {
	s := &procSampler{pid: pid, done: make(chan struct{})}
	s.cpu0, _ = processCPU(pid)
	s.sample()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *procSampler) sample() {
	rss, hwm, err := processRSS(s.pid)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peakKB = max(s.peakKB, rss, hwm)
	s.lastKB = rss
}

func (s *procSampler) stop() procSample {
	close(s.done)
	s.wg.Wait()
	s.sample()
	cpu, _ := processCPU(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	return procSample{cpu: cpu - s.cpu0, peakRSSMB: float64(s.peakKB) / 1024, endRSSMB: float64(s.lastKB) / 1024}
}

// processRSS reads VmRSS and VmHWM (kB) from /proc/PID/status.
func processRSS(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if k == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
	}
	return rss, hwm, nil
}

// processCPU reads utime+stime from /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from its closing parenthesis.
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(string(data[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}
