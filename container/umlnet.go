package container

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A guest reaches the network through slirp, which needs neither a tun device nor root,
// by one of two routes, depending on the UML kernel: kernels up to 6.x have UML's own
// slirp transport (eth0=slirp,,<slirp binary>); 7.x kernels have only the vector driver,
// whose vde transport runs vde_plug with its slirp plugin (libslirp) behind the guest's
// vec0. Both give the guest slirp's 10.0.2.0/24 with the host at 10.0.2.2.
type UMLNetwork string

const (
	NetworkNone        UMLNetwork = ""          // no network device
	NetworkSlirp       UMLNetwork = "slirp"     // UML's slirp transport and the Slirp binary
	NetworkVDESlirp    UMLNetwork = "vde-slirp" // the vector driver, vde_plug and its slirp plugin
	vdePlug                       = "vde_plug"
	vdeSlirpPlugin                = "libvdeplug_slirp.so"
	kernelConfigSlirp             = "CONFIG_UML_NET_SLIRP=y"
	kernelConfigVector            = "CONFIG_UML_NET_VECTOR=y"
)

// device is the guest's network interface on this route.
func (n UMLNetwork) device() string {
	if n == NetworkVDESlirp {
		return "vec0"
	}
	return "eth0"
}

// kernelArg is the kernel command-line argument that gives the guest its interface.
func (n UMLNetwork) kernelArg(slirp string) string {
	switch n {
	case NetworkSlirp:
		return "eth0=slirp,," + slirp
	case NetworkVDESlirp:
		return "vec0:transport=vde,vnl=slirp://"
	}
	return ""
}

// chooseNetwork picks the route for the executor's kernel from the configuration the
// kernel was built with (linux.uml --showconfig), and checks that the route's helpers
// are installed. Without a Slirp binary configured, guests get no network.
func (e *UMLExecutor) chooseNetwork() (UMLNetwork, error) {
	if e.Slirp == "" {
		return NetworkNone, nil
	}
	config, err := kernelConfig(e.Kernel)
	if err != nil {
		return NetworkNone, err
	}
	switch {
	case config[kernelConfigSlirp]:
		if _, err := exec.LookPath(e.Slirp); err != nil {
			return NetworkNone, fmt.Errorf("uml executor: the kernel %s reaches the network through slirp: bobbin.nodemanager.uml.slirp: %w (Debian package slirp)", e.Kernel, err)
		}
		return NetworkSlirp, nil
	case config[kernelConfigVector]:
		if _, err := exec.LookPath(vdePlug); err != nil {
			return NetworkNone, fmt.Errorf("uml executor: the kernel %s reaches the network through vde_plug's slirp plugin: %w (Debian packages vdeplug, libvdeplug-slirp)", e.Kernel, err)
		}
		if !vdeSlirpInstalled() {
			return NetworkNone, fmt.Errorf("uml executor: the kernel %s reaches the network through vde_plug's slirp plugin, and %s is not installed (Debian package libvdeplug-slirp)", e.Kernel, vdeSlirpPlugin)
		}
		return NetworkVDESlirp, nil
	}
	return NetworkNone, fmt.Errorf("uml executor: the kernel %s has neither UML's slirp transport (%s) nor its vector driver (%s): guests could have no network; set bobbin.nodemanager.uml.slirp empty to run them without one",
		e.Kernel, kernelConfigSlirp, kernelConfigVector)
}

// vdeSlirpInstalled says vde_plug's slirp plugin is where libvdeplug looks for plugins.
func vdeSlirpInstalled() bool {
	for _, pattern := range []string{"/usr/lib/*/vdeplug/", "/usr/lib/vdeplug/", "/usr/local/lib/vdeplug/", "/usr/local/lib/*/vdeplug/"} {
		if m, _ := filepath.Glob(pattern + vdeSlirpPlugin); len(m) > 0 {
			return true
		}
	}
	return false
}

// kernelConfig is the set of options the UML kernel was built with ("CONFIG_X=y"), as
// it prints them to --showconfig.
func kernelConfig(kernel string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kernel, "--showconfig").Output()
	if err != nil {
		return nil, fmt.Errorf("uml executor: %s --showconfig: %w", kernel, err)
	}
	config := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "CONFIG_") {
			config[l] = true
		}
	}
	return config, nil
}
