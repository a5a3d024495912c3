// The helper JVM in which Bobbin's NodeManager runs a Java auxiliary service (a class
// extending org.apache.hadoop.yarn.server.api.AuxiliaryService: Spark's
// YarnShuffleService, Tez's ShuffleHandler, ...). The NodeManager starts it with Java's
// source-file launcher (`java -cp CLASSPATH AuxServiceHost.java NAME CLASS RECOVERY
// SERVICE-CLASSPATH`, RECOVERY and SERVICE-CLASSPATH empty when not set), with the node's
// configuration directory and Hadoop jars on CLASSPATH.
//
// It loads the service as the Java NodeManager's AuxServices does: with a service
// classpath (yarn.nodemanager.aux-services.NAME.classpath), in Hadoop's own
// ApplicationClassLoader over it (entries split on ':', DIR/* for a directory's jars, DIR
// for its classes; the service's classes first, except the system classes of
// yarn.nodemanager.aux-services.NAME.system-classes, else Hadoop's default list), which
// is also the context class loader of every call and of the threads the service starts;
// without one, from CLASSPATH. Then it sets its recovery path, init()s it with the node's configuration
// (yarn-site.xml and core-site.xml from the classpath, as the Java NodeManager's), start()s
// it, then answers one line per line on stdin, one call at a time:
//
//   initApp APP USER DATA          initializeApplication (DATA: the service data, base64)
//   stopApp APP                    stopApplication
//   initContainer CONTAINER USER   initializeContainer
//   stopContainer CONTAINER USER   stopContainer
//   meta                           getMetaData
//   stop                           stop(), then exit
//
// with "ok [VALUE]" or "err MESSAGE" (one line). Its first line says how init and start
// went: "ok META" (getMetaData in base64) or "err MESSAGE". What the service logs goes to
// stderr, which the NodeManager logs; stdin closing (the NodeManager gone) stops it.
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.ApplicationClassLoader;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryService;
import org.apache.hadoop.yarn.server.api.ContainerInitializationContext;
import org.apache.hadoop.yarn.server.api.ContainerTerminationContext;

public final class AuxServiceHost {
  private static PrintStream out;

  public static void main(String[] args) throws Exception {
    out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    System.setOut(System.err); // nothing the service prints may reach the protocol
    AuxiliaryService svc;
    try {
      Configuration conf = new YarnConfiguration();
      ClassLoader loader = AuxServiceHost.class.getClassLoader();
      if (!args[3].isEmpty()) {
        String[] system = conf.getTrimmedStrings(String.format("yarn.nodemanager.aux-services.%s.system-classes", args[0]));
        loader = new ApplicationClassLoader(args[3], loader, Arrays.asList(system));
        // Every call comes from this thread, and the service's own threads inherit it.
        Thread.currentThread().setContextClassLoader(loader);
        // As AuxiliaryServiceWithCustomClassLoader: the service's configuration finds
        // classes (getClass, getInstances) in its own classpath.
        conf = new YarnConfiguration(conf);
        conf.setClassLoader(loader);
      }
      Class<?> cls = Class.forName(args[1], true, loader);
      if (!AuxiliaryService.class.isAssignableFrom(cls)) {
        throw new IllegalArgumentException(args[1] + " is not an " + AuxiliaryService.class.getName());
      }
      svc = (AuxiliaryService) cls.getDeclaredConstructor().newInstance();
      if (!args[2].isEmpty()) {
        svc.setRecoveryPath(new Path(args[2]));
      }
      svc.init(conf);
      svc.start();
      reply("ok", meta(svc));
    } catch (Throwable t) {
      t.printStackTrace();
      reply("err", describe(t));
      System.exit(1);
      return;
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.split(" ", -1);
      try {
        switch (f[0]) {
          case "initApp":
            svc.initializeApplication(new ApplicationInitializationContext(f[2], appId(f[1]),
                ByteBuffer.wrap(Base64.getDecoder().decode(f[3]))));
            reply("ok", "");
            break;
          case "stopApp":
            svc.stopApplication(new ApplicationTerminationContext(appId(f[1])));
            reply("ok", "");
            break;
          case "initContainer":
            svc.initializeContainer(new ContainerInitializationContext(f[2], containerId(f[1]), Resource.newInstance(0, 0)));
            reply("ok", "");
            break;
          case "stopContainer":
            svc.stopContainer(new ContainerTerminationContext(f[2], containerId(f[1]), Resource.newInstance(0, 0)));
            reply("ok", "");
            break;
          case "meta":
            reply("ok", meta(svc));
            break;
          case "stop":
            svc.stop();
            reply("ok", "");
            System.exit(0); // the service's own threads may not be daemons
            return;
          default:
            reply("err", "unknown call " + f[0]);
        }
      } catch (Throwable t) {
        t.printStackTrace();
        reply("err", describe(t));
      }
    }
    svc.stop();
    System.exit(0);
  }

  private static void reply(String status, String value) {
    out.println(value.isEmpty() ? status : status + " " + value);
  }

  private static String describe(Throwable t) {
    return (t.getClass().getName() + ": " + t.getMessage()).replace('\n', ' ');
  }

  private static String meta(AuxiliaryService svc) {
    ByteBuffer b = svc.getMetaData();
    if (b == null) {
      return "";
    }
    byte[] bytes = new byte[b.remaining()];
    b.duplicate().get(bytes);
    return Base64.getEncoder().encodeToString(bytes);
  }

  // application_<cluster timestamp>_<id>
  private static ApplicationId appId(String s) {
    String[] p = s.split("_");
    return ApplicationId.newInstance(Long.parseLong(p[1]), Integer.parseInt(p[2]));
  }

  // container_[e<epoch>_]<cluster timestamp>_<app>_<attempt>_<id>; the epoch is the id's
  // high bits.
  private static ContainerId containerId(String s) {
    String[] p = s.split("_");
    int i = 1;
    long epoch = 0;
    if (p[i].startsWith("e")) {
      epoch = Long.parseLong(p[i].substring(1));
      i++;
    }
    ApplicationId app = ApplicationId.newInstance(Long.parseLong(p[i]), Integer.parseInt(p[i + 1]));
    ApplicationAttemptId att = ApplicationAttemptId.newInstance(app, Integer.parseInt(p[i + 2]));
    return ContainerId.newContainerId(att, (epoch << 40) | Long.parseLong(p[i + 3]));
  }
}
