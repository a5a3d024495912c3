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

	"github.com/bobbin-yarn/bobbin/container"
)

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

// processCPU is a process's user+system CPU time so far.
func processCPU(pid int) (time.Duration, error) {
	u, ok := container.ProcessUsage(pid)
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat unreadable", pid)
	}
	return u.CPU, nil
}
