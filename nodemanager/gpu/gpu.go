// Package gpu is the NodeManager's yarn.io/gpu resource plugin, as Hadoop 3.1's: the
// node's GPUs found with `nvidia-smi -q -x` (or listed by the admin), and which
// container holds which of them. It runs no container and touches no cgroup: the
// NodeManager puts the assignment into the container's environment and denies it the
// other GPUs' device files.
package gpu

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ResourceName is the resource type GPUs are counted in.
const ResourceName = "yarn.io/gpu"

// Major is the character-device major number of /dev/nvidia<minor>.
const Major = 195

// Device is one GPU the node offers: its index (nvidia-smi's, the order CUDA counts in
// with CUDA_DEVICE_ORDER=PCI_BUS_ID) and the minor number of its /dev/nvidia<minor>.
type Device struct {
	Index int `json:"index"`
	Minor int `json:"minorNumber"`
}

// Info is what nvidia-smi says of the GPUs (served at /ws/v1/node/resources/yarn.io%2Fgpu).
type Info struct {
	DriverVersion string      `xml:"driver_version" json:"driverVersion"`
	GPUs          []DeviceXML `xml:"gpu" json:"gpus"`
}

// DeviceXML is one <gpu> of `nvidia-smi -q -x`, the fields Java's
// GpuDeviceInformationParser reads.
type DeviceXML struct {
	ProductName string `xml:"product_name" json:"productName"`
	UUID        string `xml:"uuid" json:"uuid"`
	Minor       int    `xml:"minor_number" json:"minorNumber"`
	Memory      struct {
		Total string `xml:"total" json:"total"`
		Used  string `xml:"used" json:"used"`
		Free  string `xml:"free" json:"free"`
	} `xml:"fb_memory_usage" json:"gpuMemoryUsage"`
	Utilization struct {
		GPU    string `xml:"gpu_util" json:"overallGpuUtilization"`
		Memory string `xml:"memory_util" json:"memoryUtilization"`
	} `xml:"utilization" json:"gpuUtilizations"`
	Temperature struct {
		Current  string `xml:"gpu_temp" json:"currentGpuTemp"`
		Max      string `xml:"gpu_temp_max_threshold" json:"maxGpuTemp"`
		Slowdown string `xml:"gpu_temp_slow_threshold" json:"slowThresholdGpuTemp"`
	} `xml:"temperature" json:"temperature"`
}

// Parse reads `nvidia-smi -q -x` output.
func Parse(b []byte) (Info, error) {
	var info Info
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = false // its DOCTYPE names a DTD that is not fetched
	if err := d.Decode(&info); err != nil {
		return Info{}, fmt.Errorf("nvidia-smi's XML: %w", err)
	}
	return info, nil
}

// Settings are the plugin's keys.
type Settings struct {
	// Allowed is "auto" (every GPU nvidia-smi finds) or the admin's list,
	// yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices.
	Allowed string
	// Executable is nvidia-smi, or the directory holding it
	// (...gpu.path-to-discovery-executables); empty: looked for where NVIDIA installs it.
	Executable string
	Timeout    time.Duration
}

// searchDirs are where Java's GpuDiscoverer looks for nvidia-smi by default.
var searchDirs = []string{"/usr/bin", "/bin", "/usr/local/nvidia/bin"}

// Discover finds the GPUs the node offers: the admin's list, or nvidia-smi's. The
// nvidia-smi output is returned too (nil for a list).
func Discover(ctx context.Context, s Settings) ([]Device, *Info, error) {
	if s.Allowed != "" && !strings.EqualFold(s.Allowed, "auto") {
		devs, err := ParseAllowed(s.Allowed)
		return devs, nil, err
	}
	exe, err := findExecutable(s.Executable)
	if err != nil {
		return nil, nil, err
	}
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, "-x", "-q")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%s -x -q: %w: %s", exe, err, strings.TrimSpace(stderr.String()))
	}
	info, err := Parse(out.Bytes())
	if err != nil {
		return nil, nil, fmt.Errorf("%s -x -q: %w", exe, err)
	}
	devs := make([]Device, len(info.GPUs))
	for i, g := range info.GPUs {
		devs[i] = Device{Index: i, Minor: g.Minor}
	}
	return devs, &info, nil
}

func findExecutable(path string) (string, error) {
	if path != "" {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			path = filepath.Join(path, "nvidia-smi")
		}
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("GPU discovery: %w", err)
		}
		return path, nil
	}
	for _, d := range searchDirs {
		if p := filepath.Join(d, "nvidia-smi"); fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("GPU discovery: no nvidia-smi in %s", strings.Join(searchDirs, ", "))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ParseAllowed reads the admin's list, "index:minor" pairs separated by commas, as
// Java's GpuDiscoverer does.
func ParseAllowed(v string) ([]Device, error) {
	var out []Device
	seen := map[int]bool{}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i, m, ok := strings.Cut(part, ":")
		index, err1 := strconv.Atoi(strings.TrimSpace(i))
		minor, err2 := strconv.Atoi(strings.TrimSpace(m))
		if !ok || err1 != nil || err2 != nil || index < 0 || minor < 0 {
			return nil, fmt.Errorf("%q is not index:minor_number (for example 0:0,1:1)", part)
		}
		if seen[minor] {
			return nil, fmt.Errorf("minor number %d is listed twice", minor)
		}
		seen[minor] = true
		out = append(out, Device{Index: index, Minor: minor})
	}
	if len(out) == 0 {
		return nil, errors.New("lists no GPU")
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	return out, nil
}
