// An auxiliary service for javahost's test: it writes each call it gets to the file
// named by the configuration key recording.file, answers getMetaData with "meta:<name>",
// and refuses an application whose service data is "bad". At init it records whether it
// was loaded in its own class loader, the context class loader of its calls and its
// configuration's.
import java.io.FileWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryService;
import org.apache.hadoop.yarn.server.api.ContainerInitializationContext;
import org.apache.hadoop.yarn.server.api.ContainerTerminationContext;

public class RecordingService extends AuxiliaryService {
  private String file;

  public RecordingService() {
    super("recording");
  }

  private void record(String s) {
    try (FileWriter w = new FileWriter(file, true)) {
      w.write(s + "\n");
    } catch (IOException e) {
      throw new RuntimeException(e);
    }
  }

  @Override
  protected void serviceInit(Configuration conf) throws Exception {
    file = conf.get("recording.file");
    ClassLoader own = getClass().getClassLoader();
    record("init recovery=" + (getRecoveryPath() != null)
        + " isolated=" + (own instanceof org.apache.hadoop.util.ApplicationClassLoader
            && Thread.currentThread().getContextClassLoader() == own && conf.getClassLoader() == own));
    System.out.println("a line the service prints to stdout");
    super.serviceInit(conf);
  }

  @Override
  protected void serviceStop() throws Exception {
    record("stop");
    super.serviceStop();
  }

  @Override
  public void initializeApplication(ApplicationInitializationContext ctx) {
    ByteBuffer b = ctx.getApplicationDataForService();
    byte[] data = new byte[b.remaining()];
    b.get(data);
    String s = new String(data, StandardCharsets.UTF_8);
    if (s.equals("bad")) {
      throw new IllegalArgumentException("bad service data for " + ctx.getApplicationId());
    }
    record("initApp " + ctx.getApplicationId() + " " + ctx.getUser() + " " + s);
  }

  @Override
  public void stopApplication(ApplicationTerminationContext ctx) {
    record("stopApp " + ctx.getApplicationId());
  }

  @Override
  public void initializeContainer(ContainerInitializationContext ctx) {
    record("initContainer " + ctx.getContainerId() + " " + ctx.getUser());
  }

  @Override
  public void stopContainer(ContainerTerminationContext ctx) {
    record("stopContainer " + ctx.getContainerId() + " " + ctx.getUser());
  }

  @Override
  public ByteBuffer getMetaData() {
    return ByteBuffer.wrap(("meta:" + getName()).getBytes(StandardCharsets.UTF_8));
  }
}
