// RMTokenClient drives RM delegation tokens with Hadoop's own client classes, for
// integration.TestKerberosYarnCLI: the logged-in (kinit) user gets a token naming a
// renewer (args[0]), a user holding only that token lists applications with it, the
// logged-in user renews and cancels it, and the cancelled token is refused.
import java.security.PrivilegedExceptionAction;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.client.RMDelegationTokenIdentifier;
import org.apache.hadoop.yarn.util.ConverterUtils;

public class RMTokenClient {
  public static void main(String[] args) throws Exception {
    final Configuration conf = new YarnConfiguration();
    UserGroupInformation.setConfiguration(conf);
    YarnClient yc = YarnClient.createYarnClient();
    yc.init(conf);
    yc.start();
    org.apache.hadoop.yarn.api.records.Token t = yc.getRMDelegationToken(new Text(args[0]));
    Text service = ClientRMProxy.getRMDelegationTokenService(conf);
    final Token<RMDelegationTokenIdentifier> tok = ConverterUtils.convertFromYarn(t, service);
    RMDelegationTokenIdentifier id = tok.decodeIdentifier();
    System.out.println("token owner=" + id.getOwner() + " renewer=" + id.getRenewer() + " kind=" + tok.getKind());

    UserGroupInformation holder = UserGroupInformation.createRemoteUser("tokenholder");
    holder.addToken(tok);
    PrivilegedExceptionAction<Integer> list = new PrivilegedExceptionAction<Integer>() {
      public Integer run() throws Exception {
        YarnClient c = YarnClient.createYarnClient();
        c.init(conf);
        c.start();
        try {
          return c.getApplications().size();
        } finally {
          c.stop();
        }
      }
    };
    System.out.println("applications listed with the token: " + holder.doAs(list));
    long expiry = tok.renew(conf);
    System.out.println("renewed: " + (expiry > System.currentTimeMillis()));
    tok.cancel(conf);
    System.out.println("cancelled");
    conf.setInt("yarn.resourcemanager.connect.max-wait.ms", 2000);
    conf.setInt("yarn.resourcemanager.connect.retry-interval.ms", 500);
    // A new user holding the token opens a new connection (an open one stays
    // authenticated, in Java's RM too).
    UserGroupInformation late = UserGroupInformation.createRemoteUser("lateholder");
    late.addToken(tok);
    try {
      late.doAs(list);
      System.out.println("the cancelled token still works");
    } catch (Exception e) {
      System.out.println("cancelled token refused: " + e);
    }
    yc.stop();
  }
}
