import com.google.protobuf.Descriptors.*;
import com.google.protobuf.DescriptorProtos.*;
// ProtoDump prints the protobuf descriptors compiled into Hadoop jars in a compact .proto-like
// form; TestProtoFieldsMatchHadoopJars compares them with Bobbin's generated Go.
public class ProtoDump {
  public static void main(String[] a) throws Exception {
    for (String cn : a) {
      FileDescriptor fd = (FileDescriptor) Class.forName(cn).getMethod("getDescriptor").invoke(null);
      System.out.println("// ==== " + fd.getName() + " package " + fd.getPackage() + " deps " + fd.getDependencies().stream().map(FileDescriptor::getName).toList());
      for (EnumDescriptor e : fd.getEnumTypes()) pe(e, "");
      for (Descriptor d : fd.getMessageTypes()) pm(d, "");
      for (ServiceDescriptor s : fd.getServices()) {
        System.out.println("service " + s.getName() + " {");
        for (MethodDescriptor m : s.getMethods()) System.out.println("  rpc " + m.getName() + "(" + m.getInputType().getFullName() + ") returns (" + m.getOutputType().getFullName() + ");");
        System.out.println("}");
      }
    }
  }
  static void pe(EnumDescriptor e, String in) {
    System.out.println(in + "enum " + e.getName() + " {");
    for (EnumValueDescriptor v : e.getValues()) System.out.println(in + "  " + v.getName() + " = " + v.getNumber() + ";");
    System.out.println(in + "}");
  }
  static void pm(Descriptor d, String in) {
    System.out.println(in + "message " + d.getName() + " {");
    for (EnumDescriptor e : d.getEnumTypes()) pe(e, in + "  ");
    for (Descriptor n : d.getNestedTypes()) pm(n, in + "  ");
    for (FieldDescriptor f : d.getFields()) {
      FieldDescriptorProto p = f.toProto();
      String t = (f.getType() == FieldDescriptor.Type.MESSAGE) ? f.getMessageType().getFullName() : (f.getType() == FieldDescriptor.Type.ENUM ? f.getEnumType().getFullName() : f.getType().name().toLowerCase());
      String lab = f.isRequired() ? "required" : (f.isRepeated() ? "repeated" : "optional");
      String def = p.hasDefaultValue() ? " [default = " + p.getDefaultValue() + "]" : "";
      String packed = f.isPacked() ? " [packed=true]" : "";
      System.out.println(in + "  " + lab + " " + t + " " + f.getName() + " = " + f.getNumber() + def + packed + ";");
    }
    System.out.println(in + "}");
  }
}
