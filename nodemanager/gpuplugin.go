package nodemanager

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/container/cgroups"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/gpu"
)

// Hadoop 3.1's GPU resource plugin, as Bobbin serves it: the node's GPUs found with
// nvidia-smi (or listed), their count offered as yarn.io/gpu, each container given
// specific GPUs (recorded for a restart), told them in its environment, and denied the
// others' device files through its cgroup. Java assigns and isolates only under
// LinuxContainerExecutor with cgroups; Bobbin does under either executor, with the
// devices controller (v1) or an eBPF device program (v2), and refuses to start where it
// cannot.

const (
	keyResourcePlugins = "yarn.nodemanager.resource-plugins"
	keyGPUAllowed      = "yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices"
	keyGPUDiscovery    = "yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables"
)

// readGPUSettings reads the plugin's keys: nil when yarn.io/gpu is not among the plugins.
func readGPUSettings(c *conf.Configuration) (*gpu.Settings, error) {
	plugins, err := c.Strings(keyResourcePlugins)
	if err != nil {
		return nil, err
	}
	var on bool
	for _, p := range plugins {
		switch p {
		case "":
		case gpu.ResourceName:
			on = true
		default:
			return nil, &conf.ValueError{Source: c.Source(keyResourcePlugins), Key: keyResourcePlugins, Value: strings.Join(plugins, ","),
				Reason: fmt.Sprintf("resource plugin %s is not served by Bobbin's NodeManager (yarn.io/gpu is); offer a count with yarn.nodemanager.resource-type.%s instead", p, p)}
		}
	}
	if !on {
		return nil, nil
	}
	s := &gpu.Settings{Timeout: 10 * time.Second}
	if s.Allowed, err = c.Trimmed(keyGPUAllowed); err != nil {
		return nil, err
	}
	if s.Allowed != "" && !strings.EqualFold(s.Allowed, "auto") {
		if _, err := gpu.ParseAllowed(s.Allowed); err != nil {
			return nil, &conf.ValueError{Source: c.Source(keyGPUAllowed), Key: keyGPUAllowed, Value: s.Allowed, Reason: err.Error()}
		}
	}
	if s.Executable, err = c.Trimmed(keyGPUDiscovery); err != nil {
		return nil, err
	}
	return s, nil
}

// gpuPlugin is the node's GPUs and who holds them.
type gpuPlugin struct {
	alloc *gpu.Allocator
	info  *gpu.Info // nvidia-smi's, nil for an admin's list
	// types are the cluster's resource types, yarn.io/gpu at index.
	types resourcetypes.Types
	index int
}

// discoverGPUs finds the node's GPUs and offers their count; the resource type must be
// the cluster's (resource-types.xml), as for Java.
func discoverGPUs(s *Settings) (*gpuPlugin, error) {
	devs, info, err := gpu.Discover(context.Background(), *s.GPU)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: %s=%s: %w", keyResourcePlugins, gpu.ResourceName, err)
	}
	i, ok := s.Types.Index(gpu.ResourceName)
	if !ok {
		return nil, fmt.Errorf("nodemanager: %s=%s: the resource type %s is not declared (yarn.resource-types in resource-types.xml)", keyResourcePlugins, gpu.ResourceName, gpu.ResourceName)
	}
	s.Offer[i] = int64(len(devs))
	return &gpuPlugin{alloc: gpu.NewAllocator(devs), info: info, types: s.Types, index: i}, nil
}

// asked is how many GPUs a container's resource holds, in the type's units.
func (g *gpuPlugin) asked(c *containers.Container) (int, error) {
	v := make([]int64, g.types.Len())
	if _, err := g.types.FromProto(c.Resource(), v); err != nil {
		return 0, err
	}
	return int(v[g.index]), nil
}

// denied are the device numbers of the node's GPUs container c does not hold.
func (g *gpuPlugin) denied(id string) []cgroups.DeviceNumber {
	var out []cgroups.DeviceNumber
	for _, d := range g.alloc.Others(g.alloc.Held(id)) {
		out = append(out, cgroups.DeviceNumber{Major: gpu.Major, Minor: int64(d.Minor)})
	}
	return out
}

// resourceInfo is /ws/v1/node/resources/yarn.io%2Fgpu, in Java's NMGpuResourceInfo keys.
func (g *gpuPlugin) resourceInfo() map[string]any {
	out := map[string]any{"totalGpuDevices": g.alloc.Devices(), "assignedGpuDevices": g.alloc.Assigned()}
	if g.info != nil {
		out["gpuDeviceInformation"] = g.info
	}
	return out
}

// gpuHook gives a container its GPUs and tells it which (CUDA_VISIBLE_DEVICES and
// NVIDIA_VISIBLE_DEVICES by nvidia-smi's index, CUDA counting in that order); a
// restarted NodeManager gives them back; the container's end frees them.
type gpuHook struct {
	g     *gpuPlugin
	table *containers.Table
	log   *logrus.Entry
}

func (gpuHook) Name() string { return "gpu" }

func (h gpuHook) Prestart(ctx context.Context, c *containers.Container, p *launchPlan) error {
	n, err := h.g.asked(c)
	if err != nil {
		return fmt.Errorf("Failed to assign GPUs to %s: %v", c.ID, err)
	}
	if free := h.g.alloc.Free(); n > free && len(h.g.alloc.Held(c.ID.String())) == 0 {
		h.log.WithFields(map[string]any{"container": c.ID.String(), "application": c.ID.Attempt.App.String(), "gpus": n, "free": free}).
			Info("container waiting for GPUs an ending container still holds")
	}
	devs, err := h.g.alloc.Assign(ctx, c.ID.String(), n)
	if err != nil {
		return fmt.Errorf("Failed to assign GPUs to %s: %v", c.ID, err)
	}
	var minors []int
	var indexes []string
	for _, d := range devs {
		minors = append(minors, d.Minor)
		indexes = append(indexes, strconv.Itoa(d.Index))
	}
	h.table.HoldsGPUs(c, minors)
	if n > 0 {
		list := strings.Join(indexes, ",")
		p.env["CUDA_DEVICE_ORDER"], p.env["CUDA_VISIBLE_DEVICES"], p.env["NVIDIA_VISIBLE_DEVICES"] = "PCI_BUS_ID", list, list
	}
	return nil
}

func (h gpuHook) Restore(c *containers.Container) {
	h.g.alloc.Restore(c.ID.String(), h.table.GPUsOf(c))
}

func (h gpuHook) Stop(c *containers.Container, ended bool) {
	if ended {
		h.g.alloc.Release(c.ID.String())
	}
}
