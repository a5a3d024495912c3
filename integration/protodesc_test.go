package integration

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	_ "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// The Hadoop classes whose descriptors Bobbin's .proto files must cover.
var hadoopProtoClasses = []string{
	"org.apache.hadoop.ipc.protobuf.RpcHeaderProtos",
	"org.apache.hadoop.ipc.protobuf.IpcConnectionContextProtos",
	"org.apache.hadoop.ipc.protobuf.ProtobufRpcEngineProtos",
	"org.apache.hadoop.security.proto.SecurityProtos",
	"org.apache.hadoop.ha.proto.HAServiceProtocolProtos",
	"org.apache.hadoop.yarn.proto.YarnProtos",
	"org.apache.hadoop.yarn.proto.YarnServiceProtos",
	"org.apache.hadoop.yarn.proto.ApplicationClientProtocol",
	"org.apache.hadoop.yarn.proto.ApplicationMasterProtocol",
	"org.apache.hadoop.yarn.proto.ContainerManagementProtocol",
	"org.apache.hadoop.yarn.proto.YarnServerResourceManagerServiceProtos",
	"org.apache.hadoop.yarn.proto.ResourceManagerAdministrationProtocol",
	"org.apache.hadoop.yarn.proto.YarnSecurityTokenProtos",
	"org.apache.hadoop.yarn.proto.YarnServerCommonProtos",
	"org.apache.hadoop.yarn.proto.YarnServerCommonServiceProtos",
	"org.apache.hadoop.yarn.proto.ResourceTracker",
}

// Differences from 2.7.3 that are deliberate and wire-compatible (Hadoop 3.x definitions).
var allowedProtoDiffs = map[string]string{
	"hadoop.yarn.ResourceProto.memory":                                            "int32 -> int64 (3.x); same varint for every 2.7.3 value",
	"hadoop.yarn.ApplicationSubmissionContextProto.am_container_resource_request": "optional -> repeated (3.x)",
	"hadoop.yarn.GetClusterNodeLabelsResponseProto.nodeLabels":                    "renamed deprecatedNodeLabels (3.x)",
	"hadoop.yarn.AddToClusterNodeLabelsRequestProto.nodeLabels":                   "renamed deprecatedNodeLabels (3.x)",
}

// Enum values Bobbin names differently (only numbers travel): Bobbin compiles every
// hadoop.yarn file into one Go package, where NodeActionProto already has NORMAL.
var renamedEnumValues = map[string]string{
	"DecommissionTypeProto.NORMAL":   "DECOMMISSION_NORMAL",
	"DecommissionTypeProto.GRACEFUL": "DECOMMISSION_GRACEFUL",
	"DecommissionTypeProto.FORCEFUL": "DECOMMISSION_FORCEFUL",
}

// TestProtoFieldsMatchHadoopJars reads the descriptors compiled into the Hadoop 2.7.3 and
// 3.1.1 jars, and into Maven Central's 3.4 and 3.5 jars, and checks that every message,
// field (number, type, label) and rpc is in Bobbin's generated code.
func TestProtoFieldsMatchHadoopJars(t *testing.T) {
	for _, v := range hadoopVersions {
		t.Run(v, func(t *testing.T) {
			home := requireHadoopVersion(t, v)
			checkHadoopDescriptors(t, []string{
				filepath.Join(home, "share", "hadoop", "common", "lib", "protobuf-java-2.5.0.jar"),
				hadoopJar(home, v, "common", "hadoop-common"),
				hadoopJar(home, v, "yarn", "hadoop-yarn-api"),
				hadoopJar(home, v, "yarn", "hadoop-yarn-common"),
				hadoopJar(home, v, "yarn", "hadoop-yarn-server-common"),
			}, "", hadoopProtoClasses)
		})
	}
	for _, v := range currentHadoopVersions {
		t.Run(v, func(t *testing.T) {
			jars := currentHadoopJars(t, v)
			shaded, _ := filepath.Glob(filepath.Join(jars, "hadoop-shaded-protobuf_3_*.jar"))
			if len(shaded) != 1 {
				t.Fatalf("Hadoop %s: want one shaded protobuf jar in %s, found %v", v, jars, shaded)
			}
			// 3.3+ keeps ProtobufRpcEngine's protobuf-2.5 descriptors for old callers; its own
			// RPC engine's are ProtobufRpcEngine2's, the same messages.
			classes := make([]string, len(hadoopProtoClasses))
			for i, c := range hadoopProtoClasses {
				classes[i] = strings.Replace(c, "ProtobufRpcEngineProtos", "ProtobufRpcEngine2Protos", 1)
			}
			checkHadoopDescriptors(t, []string{
				shaded[0],
				filepath.Join(jars, "hadoop-common-"+v+".jar"),
				filepath.Join(jars, "hadoop-yarn-api-"+v+".jar"),
				filepath.Join(jars, "hadoop-yarn-common-"+v+".jar"),
				filepath.Join(jars, "hadoop-yarn-server-common-"+v+".jar"),
			}, "org.apache.hadoop.thirdparty.protobuf", classes)
		})
	}
}

// checkHadoopDescriptors dumps the descriptors of classes from the jars with ProtoDump
// (its com.google.protobuf renamed to protobufPkg, Hadoop's shaded copy, when set) and
// checks them against Bobbin's.
func checkHadoopDescriptors(t *testing.T, jars []string, protobufPkg string, classes []string) {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("javac not found: skipping the descriptor comparison")
	}
	src, err := os.ReadFile("testdata/ProtoDump.java")
	if err != nil {
		t.Fatal(err)
	}
	if protobufPkg != "" {
		src = bytes.ReplaceAll(src, []byte("com.google.protobuf"), []byte(protobufPkg))
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "ProtoDump.java"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cp := strings.Join(jars, ":")
	if b, err := exec.Command(javac, "-nowarn", "-cp", cp, "-d", out, filepath.Join(out, "ProtoDump.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	cmd := exec.Command("java", append([]string{"-cp", cp + ":" + out, "ProtoDump"}, classes...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dump, err := cmd.Output()
	if err != nil {
		t.Fatalf("ProtoDump: %v\n%s", err, stderr.Bytes())
	}
	checkDump(t, string(dump))
}

var (
	reFile    = regexp.MustCompile(`^// ==== \S+ package (\S+) `)
	reMessage = regexp.MustCompile(`^(\s*)message (\w+) \{$`)
	reEnum    = regexp.MustCompile(`^(\s*)enum (\w+) \{$`)
	reField   = regexp.MustCompile(`^\s*(required|optional|repeated) (\S+) (\w+) = (\d+)`)
	reValue   = regexp.MustCompile(`^\s*(\w+) = (-?\d+);$`)
	reService = regexp.MustCompile(`^service (\w+) \{$`)
	reRPC     = regexp.MustCompile(`^\s*rpc (\w+)\(`)
	reClose   = regexp.MustCompile(`^(\s*)\}$`)
)

func checkDump(t *testing.T, dump string) {
	var pkg string
	var stack []string // enclosing message/enum/service names
	var kinds []string
	fields, rpcs := 0, 0
	sc := bufio.NewScanner(strings.NewReader(dump))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case reFile.MatchString(line):
			pkg = reFile.FindStringSubmatch(line)[1]
			stack, kinds = nil, nil
		case reMessage.MatchString(line):
			stack, kinds = append(stack, reMessage.FindStringSubmatch(line)[2]), append(kinds, "message")
			if findDesc(pkg, stack) == nil {
				t.Errorf("message %s.%s is missing", pkg, strings.Join(stack, "."))
			}
		case reEnum.MatchString(line):
			stack, kinds = append(stack, reEnum.FindStringSubmatch(line)[2]), append(kinds, "enum")
		case reService.MatchString(line):
			stack, kinds = append(stack, reService.FindStringSubmatch(line)[1]), append(kinds, "service")
		case reClose.MatchString(line):
			stack, kinds = stack[:len(stack)-1], kinds[:len(kinds)-1]
		case len(kinds) > 0 && kinds[len(kinds)-1] == "service" && reRPC.MatchString(line):
			rpcs++
			name := reRPC.FindStringSubmatch(line)[1]
			sd, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(goPkg(pkg) + "." + stack[len(stack)-1]))
			if err != nil || sd.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(name)) == nil {
				t.Errorf("rpc %s.%s is missing", stack[len(stack)-1], name)
			}
		case len(kinds) > 0 && kinds[len(kinds)-1] == "enum" && reValue.MatchString(line):
			m := reValue.FindStringSubmatch(line)
			ed, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(goPkg(pkg) + "." + strings.Join(stack, ".")))
			if err != nil {
				t.Errorf("enum %s.%s is missing", pkg, strings.Join(stack, "."))
				continue
			}
			name := m[1]
			if renamed, ok := renamedEnumValues[strings.Join(stack, ".")+"."+name]; ok {
				name = renamed
			}
			if v := ed.(protoreflect.EnumDescriptor).Values().ByName(protoreflect.Name(name)); v == nil || strconv.Itoa(int(v.Number())) != m[2] {
				t.Errorf("enum value %s.%s = %s is missing or renumbered", strings.Join(stack, "."), m[1], m[2])
			}
		case len(kinds) > 0 && kinds[len(kinds)-1] == "message" && reField.MatchString(line):
			fields++
			m := reField.FindStringSubmatch(line)
			label, typ, name, num := m[1], m[2], m[3], m[4]
			md := findDesc(pkg, stack)
			if md == nil {
				continue
			}
			full := pkg + "." + strings.Join(stack, ".") + "." + name
			fd := md.Fields().ByNumber(protoreflect.FieldNumber(atoi(num)))
			if fd == nil {
				t.Errorf("field %s = %s is missing", full, num)
				continue
			}
			if _, ok := allowedProtoDiffs[full]; ok {
				continue
			}
			if string(fd.Name()) != name {
				t.Errorf("field %s = %s is named %s", full, num, fd.Name())
			}
			if got := typeName(fd); got != typ {
				t.Errorf("field %s: type %s, Hadoop has %s", full, got, typ)
			}
			if got := labelName(fd); got != label {
				t.Errorf("field %s: %s, Hadoop has %s", full, got, label)
			}
		}
	}
	if fields < 400 || rpcs < 35 {
		t.Fatalf("dump looks truncated: %d fields, %d rpcs", fields, rpcs)
	}
	t.Logf("checked %d fields and %d rpcs against the Hadoop jars", fields, rpcs)
}

// goPkg is where Bobbin registers a Hadoop proto package: hadoop.common is
// bobbin.hadoop.common (see IpcConnectionContext.proto).
func goPkg(pkg string) string {
	if pkg == "hadoop.common" {
		return "bobbin.hadoop.common"
	}
	return pkg
}

func findDesc(pkg string, stack []string) protoreflect.MessageDescriptor {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(goPkg(pkg) + "." + strings.Join(stack, ".")))
	if err != nil {
		return nil
	}
	md, _ := d.(protoreflect.MessageDescriptor)
	return md
}

func typeName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind:
		// Bobbin's copy of hadoop.common lives in bobbin.hadoop.common (see
		// IpcConnectionContext.proto).
		return strings.TrimPrefix(string(fd.Message().FullName()), "bobbin.")
	case protoreflect.EnumKind:
		return strings.TrimPrefix(string(fd.Enum().FullName()), "bobbin.")
	}
	return fd.Kind().String()
}

func labelName(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.Cardinality() == protoreflect.Repeated:
		return "repeated"
	case fd.Cardinality() == protoreflect.Required:
		return "required"
	}
	return "optional"
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
